package logsafe

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

func TestFilterS(t *testing.T) {
	tests := []struct {
		name    string
		msg     string
		kv      []any
		want    []any
		omitted bool // want[1] is the omission notice
	}{
		{"a response body", "Response Body", []any{"body", "k8s\x00secret"}, nil, true},
		{"a request body", "Request Body", []any{"body", "{\"data\":{}}"}, nil, true},
		{"other messages pass", "Response Status", []any{"status", "200 OK", "body", "x"}, []any{"status", "200 OK", "body", "x"}, false},
		{"other keys pass", "Response Body", []any{"verb", "GET"}, []any{"verb", "GET"}, false},
		{"odd key-value lists are not read past their end", "Response Body", []any{"body"}, []any{"body"}, false},
		{"no keys", "Response Body", nil, nil, false},
		{"an empty body stays", "Request Body", []any{"body", ""}, []any{"body", ""}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]any(nil), tc.kv...)
			msg, got := BodyFilter{}.FilterS(tc.msg, in)
			if msg != tc.msg {
				t.Errorf("message changed to %q", msg)
			}
			if !reflect.DeepEqual(in, tc.kv) {
				t.Errorf("the caller's slice was modified: %v", in)
			}
			if tc.omitted {
				if len(got) != 2 || got[0] != "body" || !strings.Contains(got[1].(string), "omitted") {
					t.Errorf("got %q, want the body replaced by an omission notice", got)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// hexDumpLine is a line of an encoding/hex Dump, as client-go logs a binary (protobuf) body.
var hexDumpLine = regexp.MustCompile(`(?m)^\s*[0-9a-f]{8}  ((?:[0-9a-f]{2} {1,2}){1,16})\s*\|`)

// holds reports whether log holds value: as is, in base64 (a JSON Secret's data), or in a hex
// dump, where it may be split over lines.
func holds(log, value string) bool {
	var dumped []byte
	for _, m := range hexDumpLine.FindAllStringSubmatch(log, -1) {
		b, _ := hex.DecodeString(strings.ReplaceAll(m[1], " ", ""))
		dumped = append(dumped, b...)
	}
	return strings.Contains(log, value) || strings.Contains(log, base64.StdEncoding.EncodeToString([]byte(value))) ||
		bytes.Contains(dumped, []byte(value))
}

// logAtV10 runs f with klog at -v=10 writing to a buffer, with filter installed (nil: none), and
// returns what was logged. klog's settings are restored afterwards.
func logAtV10(t *testing.T, filter klog.LogFilter, f func(ctx context.Context)) string {
	t.Helper()
	state := klog.CaptureState()
	t.Cleanup(state.Restore)
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{"v": "10", "logtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := fs.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	klog.SetOutput(&buf)
	klog.SetLogFilter(filter)
	f(klog.NewContext(context.Background(), klog.Background()))
	klog.Flush()
	return buf.String()
}

// End to end through the real client-go: at -v=10 it logs a Secret GET's response body (pinned
// here without the filter, so a client-go upgrade that renames its body entries fails this test
// instead of silently leaking); with the filter the request is still logged, its body is not.
func TestClientGoBodiesAreNotLogged(t *testing.T) {
	const value = "s3cr3t-value-7f1c"
	for _, contentType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		t.Run(contentType, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
					ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}, Data: map[string][]byte{"password": []byte(value)}}
				info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), contentType)
				w.Header().Set("Content-Type", contentType)
				if err := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion).Encode(secret, w); err != nil {
					t.Error(err)
				}
			}))
			defer srv.Close()
			get := func(ctx context.Context) {
				// Made at -v=10: client-go adds its request-logging round tripper when a client is made.
				client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: contentType}})
				if err != nil {
					t.Fatal(err)
				}
				if s, err := client.CoreV1().Secrets("ns").Get(ctx, "db", metav1.GetOptions{}); err != nil || string(s.Data["password"]) != value {
					t.Errorf("GET the Secret: %v, %v", s, err)
				}
			}

			unfiltered := logAtV10(t, nil, get)
			if !strings.Contains(unfiltered, `"Response Body"`) || !holds(unfiltered, value) {
				t.Fatalf("without the filter, client-go at -v=10 no longer logs the Secret in a \"Response Body\" entry; "+
					"check what BodyFilter must match in k8s.io/client-go/rest logBody. Log:\n%s", unfiltered)
			}

			filtered := logAtV10(t, BodyFilter{}, get)
			if holds(filtered, value) {
				t.Errorf("with the filter the Secret's value is still logged:\n%s", filtered)
			}
			for _, want := range []string{"/api/v1/namespaces/ns/secrets/db", `"Response Body"`, "omitted"} {
				if !strings.Contains(filtered, want) {
					t.Errorf("with the filter the log lacks %q, which it should keep:\n%s", want, filtered)
				}
			}
		})
	}
}
