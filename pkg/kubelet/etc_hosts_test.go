package kubelet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const localhostLines = "127.0.0.1\tlocalhost\n" +
	"::1\tlocalhost ip6-localhost ip6-loopback\n" +
	"fe00::0\tip6-localnet\n" +
	"fe00::0\tip6-mcastprefix\n" +
	"fe00::1\tip6-allnodes\n" +
	"fe00::2\tip6-allrouters\n"

// Upstream managedHostsFileContent, nodeHostsFileContent and GeneratePodHostNameAndDomain: the
// e2e specs "KubeletManagedEtcHosts" (the header) and "should write entries to /etc/hosts"
// (123.45.67.89\tfoo\tbar) read exactly these bytes.
func TestHostsFileContent(t *testing.T) {
	nodeHosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(nodeHosts, []byte("127.0.0.1 localhost\n10.0.0.1 node-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	aliases := []corev1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}, {IP: "::2", Hostnames: []string{"v6"}}}
	long := strings.Repeat("a", 62) + "-b"
	tests := []struct {
		name    string
		podName string // "" is web
		spec    corev1.PodSpec
		podIPs  []string
		want    string
		wantErr string
	}{
		{name: "pod network: localhost, then the pod's name on its IP", podIPs: []string{"10.88.0.7"},
			want: managedHostsHeader + localhostLines + "10.88.0.7\tweb\n"},
		{name: "one line per pod IP", podIPs: []string{"10.88.0.7", "fd00::7"},
			want: managedHostsHeader + localhostLines + "10.88.0.7\tweb\nfd00::7\tweb\n"},
		{name: "hostname and subdomain: the FQDN first", spec: corev1.PodSpec{Hostname: "db-0", Subdomain: "db"}, podIPs: []string{"10.88.0.7"},
			want: managedHostsHeader + localhostLines + "10.88.0.7\tdb-0.db.shop.svc.cluster.local\tdb-0\n"},
		{name: "hostnameOverride: no domain", spec: corev1.PodSpec{HostnameOverride: ptr.To("my.host"), Subdomain: "db"}, podIPs: []string{"10.88.0.7"},
			want: managedHostsHeader + localhostLines + "10.88.0.7\tmy.host\n"},
		{name: "a pod name cut to 63 characters, without the trailing '-'", podName: long, podIPs: []string{"10.88.0.7"},
			want: managedHostsHeader + localhostLines + "10.88.0.7\t" + strings.Repeat("a", 62) + "\n"},
		{name: "hostAliases, one line per IP", spec: corev1.PodSpec{HostAliases: aliases}, podIPs: []string{"10.88.0.7"},
			want: managedHostsHeader + localhostLines + "10.88.0.7\tweb\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n::2\tv6\n"},
		{name: "host network: the node's file, another header, then the aliases", spec: corev1.PodSpec{HostNetwork: true, HostAliases: aliases},
			want: managedHostsHeaderWithHostNetwork + "127.0.0.1 localhost\n10.0.0.1 node-1\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n::2\tv6\n"},
		{name: "host network without aliases: the node's file under the header", spec: corev1.PodSpec{HostNetwork: true},
			want: managedHostsHeaderWithHostNetwork + "127.0.0.1 localhost\n10.0.0.1 node-1\n"},
		{name: "an invalid hostname is an error", spec: corev1.PodSpec{Hostname: "Not_A_Label"}, podIPs: []string{"10.88.0.7"},
			wantErr: `pod Hostname "Not_A_Label" is not a valid DNS label`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Spec: tc.spec}
			if tc.podName != "" {
				pod.Name = tc.podName
			}
			got, err := hostsFileContent(pod, tc.podIPs, "cluster.local", nodeHosts)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q…", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("content =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// Upstream shouldMountHostsFile and makeMounts: no managed file before the pod has an IP (unless
// on the host network), none for a container that mounts /etc/hosts itself.
func TestShouldMountHostsFile(t *testing.T) {
	own := corev1.Container{VolumeMounts: []corev1.VolumeMount{{Name: "hosts", MountPath: "/etc/hosts"}}}
	other := corev1.Container{VolumeMounts: []corev1.VolumeMount{{Name: "hosts", MountPath: "/etc/hosts-original"}}}
	tests := []struct {
		name        string
		hostNetwork bool
		c           corev1.Container
		podIPs      []string
		want        bool
	}{
		{name: "pod with an IP", c: other, podIPs: []string{"10.88.0.7"}, want: true},
		{name: "pod without an IP yet", c: other, want: false},
		{name: "host network, no pod IP needed", hostNetwork: true, c: other, want: true},
		{name: "the container mounts /etc/hosts itself", c: own, podIPs: []string{"10.88.0.7"}, want: false},
		{name: "host network, the container mounts /etc/hosts itself", hostNetwork: true, c: own, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{HostNetwork: tc.hostNetwork}}
			if got := shouldMountHostsFile(pod, &tc.c, tc.podIPs); got != tc.want {
				t.Errorf("shouldMountHostsFile = %v, want %v", got, tc.want)
			}
		})
	}
}

// The pod's hosts file is replaced whole (rename), mode 0644 whatever the umask, and not
// rewritten when its content is already right.
func TestWriteHostsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "etc-hosts")
	if err := writeHostsFile(path, []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	first, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if first.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644", first.Mode().Perm())
	}
	if err := writeHostsFile(path, []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	same, _ := os.Stat(path)
	if !os.SameFile(first, same) {
		t.Error("unchanged content was written again (a new file)")
	}
	if err := writeHostsFile(path, []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	second, _ := os.Stat(path)
	if os.SameFile(first, second) {
		t.Error("changed content was written in place, not renamed over the old file")
	}
	if data, _ := os.ReadFile(path); string(data) != "two\n" {
		t.Errorf("content = %q, want %q", data, "two\n")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only etc-hosts (no temporary file left)", len(entries))
	}
}
