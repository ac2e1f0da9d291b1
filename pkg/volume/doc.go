// Package volume projects Secrets, ConfigMaps and downward API data into a pod's directories,
// and computes containers' environment variables from the same sources. It plays the part of
// the plugins of the kubelet's volume manager (pkg/volumemanager) for the volume types that carry
// API data, emptyDir and hostPath, without mounts but one (an emptyDir with medium Memory is a
// tmpfs on a real runtime): the directories it writes are bind-mounted into containers by the
// runtime.
//
// Upstream counterparts (k8s.io/kubernetes v1.36):
//
//   - pkg/volume/util/atomic_writer.go: AtomicWriter.Write and the ..data swap (atomic_writer.go),
//     writing and comparing one timestamped directory (data_dir.go), validatePath (validate.go);
//   - pkg/volume/secret/secret.go and pkg/volume/configmap/configmap.go: MakePayload
//     (payload.go: SecretPayload, ConfigMapPayload);
//   - pkg/volume/projected/projected.go: collectData (ProjectedPayload), with its
//     serviceAccountToken source (tokenPayload, tokenRequest; the token comes from pkg/token);
//   - pkg/volume/downwardapi/downwardapi.go: CollectData, and pkg/fieldpath/fieldpath.go
//     (DownwardAPIPayload, fieldpath.go);
//   - pkg/kubelet/kubelet_pods.go: makeEnvironmentVariables, podFieldSelectorRuntimeValue and
//     makeMounts (env.go: MakeEnvironment; volumes.go: Mounts; subpath.go: its subPath
//     checks), getServiceEnvVarMap with
//     pkg/kubelet/envvars/envvars.go (env_services.go: ServiceEnv);
//   - pkg/volume/util/subpath/subpath_linux.go: SafeMakeDir, doSafeMakeDir, doBindSubPath,
//     safeOpenSubPath, doSafeOpen (subpath.go: safeMakeDir, prepareSubPath, safeOpen, pinFile);
//     pkg/kubelet/container/helpers.go ExpandContainerVolumeMounts (expandSubPath);
//   - pkg/volume/emptydir/empty_dir.go: SetUpAt, setupTmpfs, TearDownAt,
//     calculateEmptyDirMemorySize (emptydir.go: setUpEmptyDir, EmptyDirMemorySize,
//     tearDownEmptyDir, HostMounter);
//   - pkg/kubelet/kubelet_resources.go defaultPodLimitsForDownwardAPI and
//     pkg/api/v1/resource/helpers.go ExtractContainerResourceValue (env_resources.go);
//   - pkg/volume/volume_linux.go SetVolumeOwnership, changeFilePermission (ownership.go).
//
// # On disk
//
// SetUpVolume writes each volume to <root>/pods/<uid>/volumes/<plugin>/<name>/, with upstream's
// plugin directory names (kubernetes.io~secret, ~configmap, ~projected, ~downward-api,
// ~empty-dir). Inside a secret volume with keys "username" and "tls/ca.crt":
//
//	creds/
//	├── ..2026_11_21_12_00_00.123456789_2718281828/   the real files, hidden, one per version
//	│   ├── username
//	│   └── tls/
//	│       └── ca.crt
//	├── ..data -> ..2026_11_21_12_00_00.123456789_2718281828
//	├── username -> ..data/username
//	└── tls -> ..data/tls                              only a path's first element is a link
//
// Names starting with ".." belong to the writer; validatePath refuses them in payloads.
//
// # Why an update is atomic
//
// The visible names never change what they point at: "username" always means
// "..data/username". Only ..data moves, and it moves in one rename(2):
//
//	write ..<new ts>/ (files fsynced) → symlink ..data_tmp -> ..<new ts> → rename ..data_tmp ..data
//	→ add/remove visible links → remove ..<old ts>/
//
// rename replaces ..data atomically, so a reader that opens "username" resolves ..data either
// before the rename (old, complete directory) or after it (new, complete directory). Files are
// never written in place. A reader that already opened an old file keeps reading it after the
// old directory is removed (Unix keeps an unlinked file alive while it is open). The one gap,
// shared with upstream: an open(2) whose path walk passed ..data just before the swap and
// reaches the old directory just after its removal fails with ENOENT; the reader retries and
// gets the new version. Content is never partial. Consumers can watch ..data with inotify to
// learn of updates.
//
// Writing the payload that is already on disk (same paths, bytes and modes) creates nothing,
// so SetUpVolume can run after every pod sync and only touches volumes whose objects changed. A
// service account token changes when the token manager refreshes it (at 80 % of its TTL): the
// next sync swaps the kube-api-access volume's ..data, and the token file is replaced whole.
//
// # Environment
//
// MakeEnvironment resolves envFrom first, then env in order, expanding $(VAR) in values with
// the variables defined before (pkg/container.Expand), then adds the service links the
// container does not define; see its comment. A resourceFieldRef to a limit the container does
// not set reads the pod-level limit, else the node's allocatable. ServiceEnv picks the Services
// a pod sees (the API server's "kubernetes" always, its namespace's with enableServiceLinks) and
// makes their variables; the kubelet hands it the Services its informer holds. Errors carry
// upstream's wording because they become the container's waiting message (reason
// CreateContainerConfigError).
//
// # Invariants
//
//   - Payload functions are pure; only Projector and AtomicWriter touch the filesystem.
//   - Calls for the same volume directory must not overlap (the volume manager runs one operation
//     per volume at a time).
//   - A pod UID or volume name that is not a single path element is refused before any path is
//     built, so CleanupPod can never remove more than one pod's directory.
//
// # Simplified
//
// One mount only: the tmpfs of an emptyDir with medium Memory (emptydir.go, upstream
// pkg/volume/emptydir), when the kubelet has a Mounter (a real runtime); hugepages mediums are
// refused. No tmpfs for secrets, no SELinux relabel. A pod's fsGroup owns its secret,
// configMap, projected, downwardAPI and emptyDir volumes (ownership.go; upstream
// SetVolumeOwnership with fsGroupChangePolicy Always), set before a new version is published;
// fsUser (a projected token owned by the containers' common runAsUser) is not done. subPath
// (subpath.go) pins a file with a hard link where upstream bind-mounts /proc/<pid>/fd/<fd>, and
// hands a directory to the runtime as its checked real path. Once the container exists neither
// runtime follows a symlink swapped in on that path (a bind mount holds the directory; the fake
// runtime opens it with RESOLVE_NO_SYMLINKS), but a swap between our check and the runtime's
// CreateContainer is not caught: upstream closes that window by bind-mounting the opened fd under
// volume-subpaths, a mount in the kubelet's namespace that we do not make. A
// subPath file on another filesystem than the root dir (a hostPath) cannot be hard-linked and
// is handed over as its checked path too.
// A token file takes the volume's defaultMode, or 0600 (0640 once the fsGroup owns it) when the
// pod sets fsGroup, as upstream. clusterTrustBundle, podCertificate and fileKeyRef are errors; resourceFieldRef
// works in env and in downwardAPI and projected volumes. hostPath (host_path.go) hands the node's path to the runtime
// as upstream does — with the fake runtime too, whose containers then read and write that host
// path: as on a real node, only trusted pods should get one (PodSecurity "baseline" forbids it).
// SetUpVolume refuses other volume types (the volume manager reports them as not supported, or
// hands hostPath and local PersistentVolumes to its own plugins). status.podIPs is not re-sorted by the node's IP family
// (upstream sortPodIPs). Mode changes are detected (upstream compares bytes only).
package volume
