package fakeruntime

import (
	"bufio"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// runImage starts a container of image with no command in a new sandbox and returns its ID and
// pod IP.
func (e *testEnv) runImage(t *testing.T, name, image string, mounts ...*runtimeapi.Mount) (id, podIP string) {
	t.Helper()
	sb := e.runSandbox(t, sandboxConfig(name))
	cfg := containerConfig(name)
	cfg.Image.Image, cfg.Mounts = image, mounts
	id = e.createContainer(t, sb, cfg)
	e.startContainer(t, id)
	resp, err := e.rs.PodSandboxStatus(e.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb})
	if err != nil {
		t.Fatal(err)
	}
	return id, resp.GetStatus().GetNetwork().GetIp()
}

// TestImageDefaults: a container with no command runs its image's default program — nginx and
// httpd serve their welcome page on port 80, redis answers PING — and an image the fake does not
// model says so in the log, then runs until stopped.
func TestImageDefaults(t *testing.T) {
	e := newServeEnv(t)
	for _, tc := range []struct{ image, want string }{
		{"nginx:1.27", "<h1>Welcome to nginx!</h1>"},
		{"docker.io/library/httpd:2.4", "<h1>It works!</h1>"},
		{"registry.example/team/nginx", "Welcome to nginx!"},
	} {
		_, ip := e.runImage(t, imageName(tc.image)+strings.Repeat("x", strings.Count(tc.image, "/")), tc.image)
		if code, body := get(t, "http://"+ip+":80/"); code != 200 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: GET / = %d %q, want 200 with %q", tc.image, code, body, tc.want)
		}
	}

	_, ip := e.runImage(t, "redis", "redis:7")
	conn, err := net.DialTimeout("tcp", ip+":6379", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	for _, req := range []string{"*1\r\n$4\r\nPING\r\n", "PING\r\n", "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n"} {
		if _, err := conn.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"+PONG\r\n", "+PONG\r\n", "$2\r\n", "hi\r\n"} {
		if line, err := r.ReadString('\n'); line != want {
			t.Errorf("redis answered %q (%v), want %q", line, err, want)
		}
	}

	_, ip = e.runImage(t, "goproxy", "registry.k8s.io/goproxy:0.1")
	if code, _ := get(t, "http://"+ip+":8080/"); code != 200 {
		t.Errorf("goproxy: GET :8080 = %d, want 200", code)
	}

	id, _ := e.runImage(t, "app", "registry.example/app:1")
	st := e.containerStatus(t, id)
	data, _ := os.ReadFile(st.GetLogPath())
	want := `minikubelet fake runtime: the default command of image "registry.example/app:1" is not modelled; this container runs until stopped (what is modelled: docs/fake-runtime.md)`
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING || strings.Count(string(data), "not modelled") != 1 || !strings.Contains(string(data), want) {
		t.Errorf("unknown image: state %s, log %q; want RUNNING with one line %q", st.GetState(), data, want)
	}
}

// TestNginxVolumeHidesTheWelcomePage: a volume mounted on nginx's html directory is served
// instead of the image's page, and nothing is written to the host directory.
func TestNginxVolumeHidesTheWelcomePage(t *testing.T) {
	e := newServeEnv(t)
	www := t.TempDir()
	if err := os.WriteFile(www+"/index.html", []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ip := e.runImage(t, "web", "nginx", &runtimeapi.Mount{ContainerPath: "/usr/share/nginx/html", HostPath: www, Readonly: true})
	if code, body := get(t, "http://"+ip+"/"); code != 200 || body != "mine\n" {
		t.Errorf("GET / = %d %q, want the volume's page", code, body)
	}
	if entries, _ := os.ReadDir(www); len(entries) != 1 {
		t.Errorf("the host directory has %d entries, want only index.html", len(entries))
	}
}

// TestServerImageThatCannotServeKeepsRunning: a second nginx in the same pod finds port 80 taken;
// it says why in its log and runs until stopped instead of crash-looping.
func TestServerImageThatCannotServeKeepsRunning(t *testing.T) {
	e := newServeEnv(t)
	sb := e.runSandbox(t, sandboxConfig("pod"))
	var ids []string
	for _, name := range []string{"first", "second"} {
		cfg := containerConfig(name)
		cfg.Image.Image = "nginx"
		ids = append(ids, e.createContainer(t, sb, cfg))
		e.startContainer(t, ids[len(ids)-1])
	}
	st := e.containerStatus(t, ids[1])
	log, _ := os.ReadFile(st.GetLogPath())
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING || !strings.Contains(string(log), "has the port") ||
		!strings.Contains(string(log), "this container serves nothing (see above); it runs until stopped") {
		t.Errorf("second nginx: %s, log %q; want RUNNING, saying why it serves nothing", st.GetState(), log)
	}
}
