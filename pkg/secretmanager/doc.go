// Package secretmanager gives the kubelet the Secrets and ConfigMaps its pods use: for env
// variables (kuberuntime), for secret/configMap/projected volumes (volume) and for
// imagePullSecrets. Only objects referenced by a pod bound to this node are fetched — the node
// authorizer would refuse the others anyway.
//
// Upstream counterparts (k8s.io/kubernetes v1.36):
//
//	pkg/kubelet/util/manager/manager.go             Manager and Store interfaces
//	pkg/kubelet/util/manager/cache_based_manager.go registered pods → refs; TTL objectStore (Cache)
//	pkg/kubelet/util/manager/watch_based_manager.go one reflector per object (Watch)
//	pkg/kubelet/secret/secret_manager.go            the Secret flavour; simpleSecretManager (Get)
//	pkg/kubelet/configmap/configmap_manager.go      the ConfigMap flavour
//	pkg/api/v1/pod/util.go                          VisitPodSecretNames, VisitPodConfigmapNames
//
// Upstream writes each strategy once over runtime.Object and wraps it twice (secret, configmap).
// Here each strategy is one generic store, objectStore[T] with T = *corev1.Secret or
// *corev1.ConfigMap; kind[T] (kind.go) holds the only kind-specific parts: the typed
// GET/LIST/WATCH calls and the immutable check. One manager holds both stores and the pod
// registry.
//
// # The three strategies (configMapAndSecretChangeDetectionStrategy)
//
//	strategy | requests per GetSecret           | staleness                     | cost
//	---------+----------------------------------+-------------------------------+---------------------------------
//	Get      | 1 GET, always                    | none                          | apiserver load ∝ pod syncs
//	Cache    | 0 within the TTL, else 1 GET;    | up to TTL (1 min)             | one GET per object per TTL;
//	         | the first Get after a new pod    |                               | entries dropped with the last pod
//	         | references it always GETs        |                               |
//	Watch    | 0; the object's first reference  | watch latency (~ms)           | one open WATCH per referenced
//	(default)| starts 1 LIST + 1 WATCH, shared  |                               | object, kept 5× Resync after its
//	         | by every pod referencing it      |                               | last pod; none once immutable
//
// Against a real API server the reflector may replace LIST + WATCH by one streaming WATCH with
// sendInitialEvents (the WatchListClient feature); the fake clientset opts out, so the unit tests
// see LIST + WATCH.
//
// # Flow
//
//	pod added/updated ──RegisterPod──▶ SecretNames/ConfigMapNames (pure) ──▶ referenceChanges (pure)
//	    ──▶ store.AddReference for new names, store.DeleteReference for dropped ones
//	pod removed ──UnregisterPod──▶ store.DeleteReference for the registered version's names
//	syncPod / volume mount ──GetSecret/GetConfigMap──▶ store.Get
//
// There is no loop of our own: the Cache strategy works on demand inside Get, and the Watch
// strategy runs one client-go reflector goroutine per object plus one clock.AfterFunc timer per
// object that lost its last reference; the timer's one turn is watchStore.dropIfIdle.
//
// # Invariants
//
//   - A reference is (object, pod UID) and is held at most once; the count is the size of a set,
//     so it never goes negative, and unregistering twice is harmless.
//   - RegisterPod and UnregisterPod never block on the network: they only change counts, start a
//     reflector goroutine or arm a timer. Only Get* talks to the API server or waits.
//   - A pod's references are those of its last registered version; re-registering with a changed
//     spec adds the new names before dropping the old, so a shared name never dips to zero.
//   - Watch: at most one reflector per object, whatever the number of pods; no reflector keeps
//     running for an object that is unreferenced for longer than the idle window or immutable.
//   - The watch store never calls the clock while holding its lock (a FakeClock runs AfterFunc
//     callbacks inside Step).
//
// # Simplified, and differences from upstream
//
//   - Cache (not a simplification, a rule worth knowing): re-registering a pod (same UID)
//     invalidates only names it did not reference before — upstream: "only invoke AddReference
//     the first time RegisterPod is called for a pod", to spare the API server a GET per pod
//     update; a new pod (new UID, e.g. re-created) invalidates all its names.
//   - Watch: upstream stops the reflector at once when the last pod unregisters, and separately
//     stops reflectors whose object was not read for 5× Resync (restarting them on the next Get).
//     We merge both into one rule: the watch lives on for the idle window after its last
//     reference (a re-created pod finds it warm), and a referenced object always keeps its watch.
//   - Watch: Get waits for the first sync on a channel for up to 5 s (upstream polls every 10 ms
//     for 1 s). Immutability is noticed on Get, as upstream.
//   - Cache: the TTL is Config.TTL (1 min). Upstream's Cache strategy takes it from the Node's
//     node.alpha.kubernetes.io/ttl annotation when present (GetObjectTTLFromNodeFunc), which
//     kube-controller-manager's TTL controller sets from the cluster size: 0 s up to 100 nodes
//     (upstream then GETs on every Get), 15 s to 5 min beyond. We do not read it: the TTL stays
//     1 min whatever the cluster size.
//   - Name collection skips the secretRefs of in-tree volume plugins and CSI (see SecretNames).
//   - No shutdown: like upstream (wait.NeverStop) the stores live as long as the kubelet.
package secretmanager
