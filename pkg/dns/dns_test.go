package dns

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

const hostResolvConf = "# the node's\nnameserver 192.0.2.53\nnameserver 192.0.2.54\nsearch corp.example. lab.example\noptions rotate timeout:2\n"

func writeResolvConf(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func testPod(policy corev1.DNSPolicy, hostNetwork bool, dc *corev1.PodDNSConfig) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u1"},
		Spec: corev1.PodSpec{DNSPolicy: policy, HostNetwork: hostNetwork, DNSConfig: dc}}
}

func drain(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// Each dnsPolicy gives the resolv.conf upstream's dns.Configurer gives (pkg/kubelet/network/dns).
func TestPodDNSPolicies(t *testing.T) {
	host := writeResolvConf(t, hostResolvConf)
	clusterDNS := []net.IP{net.ParseIP("10.96.0.10")}
	for _, tc := range []struct {
		name              string
		pod               *corev1.Pod
		resolvConf        string
		clusterDNS        []net.IP
		servers, searches string
		options           string
		events            string
	}{
		{name: "ClusterFirst: clusterDNS only, cluster domains before the node's, ndots:5",
			pod: testPod(corev1.DNSClusterFirst, false, nil), resolvConf: host, clusterDNS: clusterDNS,
			servers: "10.96.0.10", searches: "shop.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example", options: "ndots:5"},
		{name: "ClusterFirst on hostNetwork is Default: the node's file",
			pod: testPod(corev1.DNSClusterFirst, true, nil), resolvConf: host, clusterDNS: clusterDNS,
			servers: "192.0.2.53 192.0.2.54", searches: "corp.example lab.example", options: "rotate timeout:2"},
		{name: "ClusterFirstWithHostNet on hostNetwork: the cluster's",
			pod: testPod(corev1.DNSClusterFirstWithHostNet, true, nil), resolvConf: host, clusterDNS: clusterDNS,
			servers: "10.96.0.10", searches: "shop.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example", options: "ndots:5"},
		{name: "Default: the node's file",
			pod: testPod(corev1.DNSDefault, false, nil), resolvConf: host, clusterDNS: clusterDNS,
			servers: "192.0.2.53 192.0.2.54", searches: "corp.example lab.example", options: "rotate timeout:2"},
		{name: "Default with resolvConf \"\": the node's loopback, search .",
			pod: testPod(corev1.DNSDefault, false, nil), clusterDNS: clusterDNS, servers: "127.0.0.1", searches: "."},
		{name: "ClusterFirst without clusterDNS falls back to Default, with MissingClusterDNS on node and pod",
			pod: testPod(corev1.DNSClusterFirst, false, nil), resolvConf: host,
			servers: "192.0.2.53 192.0.2.54", searches: "corp.example lab.example", options: "rotate timeout:2",
			events: `Warning MissingClusterDNS kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.|` +
				`Warning MissingClusterDNS pod: "web_shop(u1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`},
		{name: "None: only dnsConfig",
			pod: testPod(corev1.DNSNone, false, &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a.example"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "edns0"}}}),
			resolvConf: host, clusterDNS: clusterDNS, servers: "1.1.1.1", searches: "a.example", options: "ndots:2 edns0"},
		{name: "ClusterFirst with dnsConfig: appended, options merged by name",
			pod: testPod(corev1.DNSClusterFirst, false, &corev1.PodDNSConfig{Nameservers: []string{"10.96.0.10", "1.1.1.1"},
				Searches: []string{"cluster.local", "extra.example"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("1")}}}),
			resolvConf: host, clusterDNS: clusterDNS, servers: "10.96.0.10 1.1.1.1",
			searches: "shop.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example extra.example", options: "ndots:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			rec := record.NewFakeRecorder(10)
			c := &Configurer{Recorder: rec, NodeRef: &corev1.ObjectReference{Kind: "Node", Name: "n1"},
				ClusterDNS: tc.clusterDNS, ClusterDomain: "cluster.local", ResolverConfig: tc.resolvConf}
			cfg, err := c.PodDNS(ctx, tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s / %s / %s", strings.Join(cfg.Servers, " "), strings.Join(cfg.Searches, " "), strings.Join(cfg.Options, " "))
			if want := fmt.Sprintf("%s / %s / %s", tc.servers, tc.searches, tc.options); got != want {
				t.Errorf("servers / searches / options:\n got %s\nwant %s", got, want)
			}
			if got := strings.Join(drain(rec), "|"); got != tc.events {
				t.Errorf("events:\n got %s\nwant %s", got, tc.events)
			}
		})
	}
}

// Over the limits: 3 nameservers, 32 search domains, each ≤ 253 characters and 2048 in all; the
// rest is cut from the end with a Warning DNSConfigForming Event, in upstream's words.
func TestPodDNSLimits(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	rec := record.NewFakeRecorder(10)
	c := &Configurer{Recorder: rec, NodeRef: &corev1.ObjectReference{Kind: "Node", Name: "n1"}}
	var searches []string
	for i := range 40 {
		searches = append(searches, fmt.Sprintf("d%d.example", i))
	}
	searches[1] = strings.Repeat("x", 254)
	pod := testPod(corev1.DNSNone, false, &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"}, Searches: searches})
	cfg, err := c.PodDNS(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 3 || len(cfg.Searches) != 31 || cfg.Searches[1] != "d2.example" {
		t.Errorf("servers %v, %d searches %v: want 3 servers, 31 searches without the long one", cfg.Servers, len(cfg.Searches), cfg.Searches)
	}
	events := drain(rec)
	if len(events) != 2 || !strings.HasPrefix(events[0], "Warning DNSConfigForming Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 1.1.1.1 2.2.2.2 3.3.3.3") ||
		!strings.HasPrefix(events[1], "Warning DNSConfigForming Search Line limits were exceeded, some search paths have been omitted, the applied search line is: d0.example d2.example") {
		t.Errorf("events %q", events)
	}
	// 2048 characters in all: domains are dropped from the end until the line fits.
	long := []string{strings.Repeat("a", 250), strings.Repeat("b", 250)}
	for len(strings.Join(long, " ")) <= maxSearchListChars {
		long = append(long, strings.Repeat("c", 250))
	}
	_, kept, warnings := fitLimits(nil, long)
	if len(strings.Join(kept, " ")) > maxSearchListChars || len(kept) != len(long)-1 || len(warnings) != 1 {
		t.Errorf("kept %d of %d (%d chars), warnings %q", len(kept), len(long), len(strings.Join(kept, " ")), warnings)
	}
}

// resolv.conf parsing: comments skipped, the last search line wins, trailing dots dropped,
// options by name (the later wins); a nameserver line without an address is an error, and an
// unreadable resolvConf fails the pod's DNS (so its sandbox), as upstream.
func TestParseResolvConfAndErrors(t *testing.T) {
	servers, searches, options, err := parseResolvConf(strings.NewReader("nameserver 1.1.1.1\n#nameserver 9.9.9.9\nsearch old.example\nsearch a.example. . b.example\noptions ndots:1 rotate\noptions ndots:3\n"))
	if err != nil || strings.Join(servers, ",") != "1.1.1.1" || strings.Join(searches, ",") != "a.example,b.example" || strings.Join(options, ",") != "ndots:3,rotate" {
		t.Errorf("parse: %v %v %v %v", servers, searches, options, err)
	}
	if _, _, _, err := parseResolvConf(strings.NewReader("nameserver\n")); err == nil || !strings.Contains(err.Error(), "nameserver list is empty") {
		t.Errorf("empty nameserver line: %v", err)
	}
	_, ctx := ktesting.NewTestContext(t)
	c := &Configurer{Recorder: record.NewFakeRecorder(1), NodeRef: &corev1.ObjectReference{}, ResolverConfig: "/nonexistent/resolv.conf"}
	if _, err := c.PodDNS(ctx, testPod(corev1.DNSDefault, false, nil)); err == nil || !strings.Contains(err.Error(), "/nonexistent/resolv.conf") {
		t.Errorf("missing resolvConf: %v", err)
	}
}

// At start, a node resolv.conf whose search line leaves no room for the three cluster domains
// gets a Warning CheckLimitsForResolvConf Event on the node.
func TestCheckLimitsForResolvConf(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	var many []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("d%d.example", i))
	}
	for _, tc := range []struct{ body, want string }{
		{hostResolvConf, ""},
		{"search " + strings.Join(many, " ") + "\n", "Warning CheckLimitsForResolvConf Resolv.conf file '%s' contains search line consisting of more than 29 domains!"},
		{"search " + strings.Repeat("x", 254) + "\n", "Warning CheckLimitsForResolvConf Resolv.conf file \"%s\" contains a search path which length is more than allowed 253 chars!"},
	} {
		p := writeResolvConf(t, tc.body)
		rec := record.NewFakeRecorder(2)
		(&Configurer{Recorder: rec, NodeRef: &corev1.ObjectReference{}, ClusterDomain: "cluster.local", ResolverConfig: p}).CheckLimitsForResolvConf(ctx)
		want := tc.want
		if want != "" {
			want = fmt.Sprintf(want, p)
		}
		if got := strings.Join(drain(rec), "|"); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
