package security

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// randomValue is a Secret value no log line could hold by chance.
func randomValue(t *testing.T) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "e2e-secret-" + hex.EncodeToString(b)
}

// hexDumpLine is one line of an encoding/hex Dump, as client-go logs binary (protobuf) bodies:
// "00000010  6b 38 73 00 0a 0c 0a 02  76 31 12 06 53 65 63 72  |k8s.....v1..Secr|".
var hexDumpLine = regexp.MustCompile(`(?m)^\s*[0-9a-f]{8}  ((?:[0-9a-f]{2} {1,2}){1,16})\s*\|`)

// decodedHexDumps returns the bytes of every hex dump in log, in order, so that a value split
// over dump lines (16 bytes each) is found whole.
func decodedHexDumps(log string) []byte {
	var out []byte
	for _, m := range hexDumpLine.FindAllStringSubmatch(log, -1) {
		b, err := hex.DecodeString(strings.ReplaceAll(m[1], " ", ""))
		if err == nil {
			out = append(out, b...)
		}
	}
	return out
}

// privateKeyFingerprints returns pieces of the private keys in a PEM file that would show that
// the key leaked: each base64 line of its body (as a log of the file would hold it) and its DER
// bytes (as a hex dump would).
func privateKeyFingerprints(t *testing.T, path string) (lines []string, der [][]byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if !strings.Contains(block.Type, "PRIVATE KEY") {
			continue
		}
		der = append(der, block.Bytes)
		for _, l := range strings.Split(string(pem.EncodeToMemory(block)), "\n") {
			if len(l) >= 32 && !strings.HasPrefix(l, "-----") {
				lines = append(lines, l)
			}
		}
	}
	if len(der) == 0 {
		t.Fatalf("%s holds no private key: the test is looking at the wrong file", path)
	}
	return lines, der
}

// At -v=10 client-go logs every request and response, bodies included (rest.Request logBody
// from V(8), whole from V(10)); the body of a Secret GET is the Secret. A kubelet run at -v=10
// to debug a pod must still not copy the cluster's secrets into its log: no bootstrap token, no
// Secret value (raw, base64, or inside a hex dump of a protobuf body), no private key. Each
// configMapAndSecretChangeDetectionStrategy reads Secrets its own way — Get and Cache by GET,
// Watch by a watch — so each is run. The log must still show the Secret's requests (URL, verb,
// status), or the test proves nothing.
func TestSecretsNeverLogged(t *testing.T) {
	for _, strategy := range []string{"Get", "Cache", "Watch"} {
		t.Run(strategy, func(t *testing.T) { secretsNeverLogged(t, strategy) })
	}
}

func secretsNeverLogged(t *testing.T, strategy string) {
	ctx := context.Background()
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"syncFrequency: 5s\nconfigMapAndSecretChangeDetectionStrategy: "+strategy+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// TLS bootstrap runs at -v=10 too. (Without -race: see verboseMinikubelet.)
	n := startNodeWith(t, verboseMinikubelet, "e2e-security-logs-"+strings.ToLower(strategy), "--config", cfgFile, "-v", "10")
	ns := namespace(t)

	first, second := randomValue(t), randomValue(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-secret"}, Data: map[string][]byte{"password": []byte(first)}}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := podOn(n.name, "app")
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "app-secret"}, Key: "password"}}}}
	pod.Spec.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-secret"}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "creds", MountPath: "/etc/creds", ReadOnly: true}}
	pod, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(n.rootDir, "pods", string(pod.UID), "volumes", "kubernetes.io~secret", "creds", "password")
	hasValue := func(want string) func() (bool, string) {
		return func() (bool, string) {
			p, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, "app", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			got, err := os.ReadFile(file)
			return p.Status.Phase == corev1.PodRunning && string(got) == want, string(p.Status.Phase) + " " + errString(err)
		}
	}
	framework.Eventually(t, 2*time.Minute, "the pod Running with the Secret in its volume", hasValue(first))
	// An update reaches the node by the strategy's second path (a re-GET, or a watch event).
	secret.Data["password"] = []byte(second)
	if _, err := cluster.Client.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "the updated Secret in the volume", hasValue(second))

	boot, err := clientcmd.LoadFromFile(cluster.BootstrapKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	token := boot.AuthInfos[boot.Contexts[boot.CurrentContext].AuthInfo].Token
	_, tokenSecret, ok := strings.Cut(token, ".")
	if !ok || len(tokenSecret) != 16 {
		t.Fatalf("the bootstrap kubeconfig's token %q is not <id>.<secret>", token)
	}

	log := n.proc.Log()
	dumps := decodedHexDumps(log)
	t.Logf("the -v=10 log: %d bytes, %d bytes of hex-dumped bodies, %d \"Response Body\" entries",
		len(log), len(dumps), strings.Count(log, `"Response Body"`))
	// The log is verbose enough to have leaked: it shows client-go's requests for the Secret.
	if !strings.Contains(log, "/namespaces/"+ns+"/secrets") {
		t.Fatalf("the -v=10 log shows no request for the Secret in %s: nothing was tested", ns)
	}
	forbidden := map[string]string{
		"the bootstrap token's secret part": tokenSecret,
		"the Secret's value":                first,
		"the Secret's updated value":        second,
		"the Secret's value in base64":      base64.StdEncoding.EncodeToString([]byte(first)),
		"the updated value in base64":       base64.StdEncoding.EncodeToString([]byte(second)),
		"a PEM private key":                 "PRIVATE KEY",
	}
	for _, keyFile := range []string{filepath.Join(n.rootDir, "pki", "kubelet-client-current.pem"), filepath.Join(n.rootDir, "pki", "kubelet.key")} {
		lines, ders := privateKeyFingerprints(t, keyFile)
		for i, l := range lines {
			forbidden[filepath.Base(keyFile)+"'s base64 line "+strconv.Itoa(i+1)] = l
		}
		for _, der := range ders {
			if bytes.Contains(dumps, der) || strings.Contains(log, string(der)) {
				t.Errorf("the log holds the DER bytes of the private key in %s", keyFile)
			}
		}
	}
	for what, s := range forbidden {
		if i := strings.Index(log, s); i >= 0 {
			t.Errorf("the log holds %s, e.g. %q", what, excerpt(log, i, len(s)))
		}
		if bytes.Contains(dumps, []byte(s)) {
			t.Errorf("the log holds %s in a hex dump of a request or response body", what)
		}
	}
}

// excerpt returns the log around a match, for the failure message.
func excerpt(log string, i, n int) string {
	start, end := max(i-120, 0), min(i+n+40, len(log))
	return log[start:end]
}
