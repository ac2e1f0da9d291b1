package volume

// Service links: the variables that tell a container where the Services of its namespace are,
// Docker-links style (upstream: pkg/kubelet/kubelet_pods.go getServiceEnvVarMap and
// pkg/kubelet/envvars/envvars.go FromServices).

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceEnv is the service-link environment of a pod in namespace ns, from services (all the
// cluster's, as the kubelet's Service informer holds them). Which services count:
//
//   - the "kubernetes" Service of the default namespace, always — even with
//     enableServiceLinks false: in-cluster clients find the API server by
//     KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT;
//   - with enableServiceLinks, every Service of ns (one of ns named "kubernetes" wins);
//   - never a headless Service (clusterIP None) or one without a cluster IP.
//
// For a Service "redis-primary" with clusterIP 10.0.0.11 and ports 6379/TCP (unnamed) and
// 9121/TCP named "metrics":
//
//	REDIS_PRIMARY_SERVICE_HOST=10.0.0.11
//	REDIS_PRIMARY_SERVICE_PORT=6379                  the first port
//	REDIS_PRIMARY_SERVICE_PORT_METRICS=9121          every named port
//	REDIS_PRIMARY_PORT=tcp://10.0.0.11:6379          Docker links: the first port,
//	REDIS_PRIMARY_PORT_6379_TCP=tcp://10.0.0.11:6379 then four per port
//	REDIS_PRIMARY_PORT_6379_TCP_PROTO=tcp
//	REDIS_PRIMARY_PORT_6379_TCP_PORT=6379
//	REDIS_PRIMARY_PORT_6379_TCP_ADDR=10.0.0.11
//	REDIS_PRIMARY_PORT_9121_TCP=tcp://10.0.0.11:9121 …
func ServiceEnv(services []*corev1.Service, ns string, enableServiceLinks bool) map[string]string {
	chosen := map[string]*corev1.Service{}
	for _, svc := range services {
		if svc.Namespace == metav1.NamespaceDefault && svc.Name == "kubernetes" && hasClusterIP(svc) {
			chosen[svc.Name] = svc
		}
	}
	if enableServiceLinks {
		for _, svc := range services {
			if svc.Namespace == ns && hasClusterIP(svc) {
				chosen[svc.Name] = svc
			}
		}
	}
	env := map[string]string{}
	// In name order, so that the rare clash of two Services' variable names always resolves
	// the same way (upstream's order is a map's).
	for _, name := range sortedKeys(chosen) {
		for _, e := range serviceVars(chosen[name]) {
			env[e.Name] = e.Value
		}
	}
	return env
}

// hasClusterIP is upstream's IsServiceIPSet.
func hasClusterIP(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone
}

// serviceVars are the variables of one Service (upstream FromServices and makeLinkVariables).
func serviceVars(svc *corev1.Service) []EnvVar {
	if len(svc.Spec.Ports) == 0 {
		return nil // not valid for a Service with a cluster IP; upstream would panic
	}
	prefix := envVarName(svc.Name)
	ip := svc.Spec.ClusterIP
	vars := []EnvVar{
		{prefix + "_SERVICE_HOST", ip},
		{prefix + "_SERVICE_PORT", strconv.Itoa(int(svc.Spec.Ports[0].Port))},
	}
	for _, p := range svc.Spec.Ports {
		if p.Name != "" {
			vars = append(vars, EnvVar{prefix + "_SERVICE_PORT_" + envVarName(p.Name), strconv.Itoa(int(p.Port))})
		}
	}
	for i, p := range svc.Spec.Ports {
		proto := strings.ToLower(string(p.Protocol))
		if proto == "" {
			proto = "tcp"
		}
		port := strconv.Itoa(int(p.Port))
		url := proto + "://" + net.JoinHostPort(ip, port)
		if i == 0 {
			vars = append(vars, EnvVar{prefix + "_PORT", url})
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, p.Port, strings.ToUpper(proto))
		vars = append(vars,
			EnvVar{pp, url},
			EnvVar{pp + "_PROTO", proto},
			EnvVar{pp + "_PORT", port},
			EnvVar{pp + "_ADDR", ip},
		)
	}
	return vars
}

// envVarName turns a Service or port name into a variable name: "redis-primary" → REDIS_PRIMARY.
func envVarName(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}
