package fakeruntime

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// An image's default program: what a container runs when its config has no command (the image's
// ENTRYPOINT and CMD). Images have no content, so the fake knows a few by their repository's name
// (nginx, docker.io/library/nginx, bitnami/nginx: "nginx"), and puts the files their program
// serves in the container's layer, as the image would have them.

// imageProgram is the default program of an image the fake models.
type imageProgram struct {
	argv       []string          // read with the program grammar
	entrypoint []string          // put before a container's args when it has no command
	files      map[string]string // written into the layer at CreateContainer, unless a mount covers them
}

const (
	nginxPage = `<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>
<p><em>Thank you for using nginx.</em> (Served by minikubelet's fake runtime.)</p>
</body>
</html>
`
	httpdPage = "<html><body><h1>It works!</h1></body></html>\n"
)

// imagePrograms are the images whose default program the fake models, by repository base name.
var imagePrograms = map[string]imageProgram{
	"nginx": {argv: serving("serve http 80 /=/usr/share/nginx/html"),
		files: map[string]string{"/usr/share/nginx/html/index.html": nginxPage}},
	"httpd": {argv: serving("serve http 80 /=/usr/local/apache2/htdocs"),
		files: map[string]string{"/usr/local/apache2/htdocs/index.html": httpdPage}},
	"redis": {argv: serving("serve redis 6379")},
	"pause": {}, // blocks until stopped: what the fake does with an empty command
	// vish/stress, the docs' cpu-demo image: ENTRYPOINT /stress, args -cpus N (parseStress).
	"stress": {argv: []string{"stress"}, entrypoint: []string{"stress"}},
	// registry.k8s.io/goproxy, the docs' tcp-liveness-readiness image: a proxy on 8080.
	"goproxy": {argv: serving("serve http 8080")},
	// registry.k8s.io/e2e-test-images/agnhost: ENTRYPOINT /agnhost, args name its subcommand.
	"agnhost": {argv: []string{"agnhost"}, entrypoint: []string{"agnhost"}},
}

// agnhostPrograms are the subcommands of agnhost the fake models, as scripts: liveness (the docs'
// liveness-http pod) serves /healthz with 200 for 10 s, then fails it (404 here, 500 in agnhost);
// netexec serves HTTP on 8080; pause blocks.
var agnhostPrograms = map[string]string{
	"liveness": "touch /tmp/agnhost-alive; serve http 8080 /healthz=/tmp/agnhost-alive & sleep 10; rm -f /tmp/agnhost-alive; sleep infinity",
	"netexec":  "serve http 8080",
	"pause":    "sleep infinity",
}

// agnhost is the program of `agnhost SUBCOMMAND …`; ok is false for one the fake does not model.
func agnhost(args []string) ([]string, bool) {
	if len(args) == 0 || agnhostPrograms[args[0]] == "" {
		return nil, false
	}
	return []string{"sh", "-c", agnhostPrograms[args[0]]}, true
}

// withEntrypoint is a container's program when it gives args but no command: the image's
// entrypoint before them, for an image whose entrypoint the fake models; else the args alone.
func withEntrypoint(ref string, args []string) []string {
	if ep := imagePrograms[imageName(ref)].entrypoint; ep != nil {
		return append(slices.Clone(ep), args...)
	}
	return args
}

// serving is a server image's program: serve, and if it cannot (port 80 needs root, or
// net.ipv4.ip_unprivileged_port_start=0; the port may be taken), say why and run until stopped, as
// the fake did before it modelled images, rather than crash-loop.
func serving(serve string) []string {
	return []string{"sh", "-c", serve + ` || echo "minikubelet fake runtime: this container serves nothing (see above); it runs until stopped" >&2; sleep infinity`}
}

// imageName is the base name of an image's repository: "docker.io/library/nginx:1.27" → "nginx".
func imageName(ref string) string {
	return path.Base(repository(normalizeImageRef(ref)))
}

// defaultProgram is the program of a container with no command in image ref, and the files to
// put in its layer. An image the fake does not model blocks until stopped and says so in its log.
func defaultProgram(ref string) ([]step, map[string]string) {
	ip, ok := imagePrograms[imageName(ref)]
	switch {
	case !ok:
		return []step{{kind: stepForever, text: notModelled(fmt.Sprintf("the default command of image %q", ref))}}, nil
	case len(ip.argv) == 0:
		return []step{{kind: stepForever}}, nil
	}
	return parseProgram(ip.argv, unknownRunsForever), ip.files
}

// notModelled is the one line a container's log gets for what the fake does not model.
func notModelled(what string) string {
	return "minikubelet fake runtime: " + what + " is not modelled; this container runs until stopped (what is modelled: docs/fake-runtime.md)"
}

// writeImageFiles puts an image's files into a container's layer; a file under a mount is
// left alone (the volume hides the image's content, and the host's files are not the image's).
func writeImageFiles(fs *rootfs, files map[string]string) error {
	for p, content := range files {
		if m, _ := fs.mountFor(p); m != nil {
			continue
		}
		if err := fs.mkdir(path.Dir(p), true); err != nil {
			return err
		}
		if err := fs.writeFile(p, []byte(content), false); err != nil {
			return err
		}
	}
	return nil
}

// writeResolvConf puts the sandbox's DNS config into a container's /etc/resolv.conf, as
// containerd writes it for the sandbox and bind-mounts it into each container: a search line,
// one nameserver line per server, an options line, each only when it has entries. A sandbox
// without a DNS config gets none (containerd would copy the host's; the fake reads nothing of
// the host), and a volume mounted at /etc/resolv.conf keeps its own.
func writeResolvConf(fs *rootfs, dc *runtimeapi.DNSConfig) error {
	if len(dc.GetServers()) == 0 && len(dc.GetSearches()) == 0 && len(dc.GetOptions()) == 0 {
		return nil
	}
	var b strings.Builder
	if len(dc.GetSearches()) > 0 {
		b.WriteString("search " + strings.Join(dc.GetSearches(), " ") + "\n")
	}
	for _, s := range dc.GetServers() {
		b.WriteString("nameserver " + s + "\n")
	}
	if len(dc.GetOptions()) > 0 {
		b.WriteString("options " + strings.Join(dc.GetOptions(), " ") + "\n")
	}
	return writeImageFiles(fs, map[string]string{"/etc/resolv.conf": b.String()})
}

// answerRedis speaks enough of the Redis protocol (RESP, or inline commands) for clients and
// probes: PING answers +PONG (or its argument), ECHO its argument, QUIT +OK and closes; anything
// else is an error that says what the fake's redis knows.
func answerRedis(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		args, err := readRedisCommand(r)
		if err != nil {
			return
		}
		if len(args) == 0 {
			continue
		}
		var reply string
		switch cmd := strings.ToUpper(args[0]); {
		case cmd == "PING" && len(args) == 1:
			reply = "+PONG\r\n"
		case cmd == "PING" || (cmd == "ECHO" && len(args) == 2):
			reply = fmt.Sprintf("$%d\r\n%s\r\n", len(args[1]), args[1])
		case cmd == "QUIT":
			_, _ = io.WriteString(c, "+OK\r\n")
			return
		default:
			reply = fmt.Sprintf("-ERR unknown command '%s': minikubelet's fake redis knows only PING, ECHO and QUIT\r\n", args[0])
		}
		if _, err := io.WriteString(c, reply); err != nil {
			return
		}
	}
}

// readRedisCommand reads one command: a RESP array of bulk strings, or an inline line of words.
func readRedisCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, "*") {
		return strings.Fields(line), nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 || n > 1024 {
		return nil, fmt.Errorf("bad array length %q", line)
	}
	args := make([]string, 0, n)
	for range n {
		head, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimRight(strings.TrimPrefix(head, "$"), "\r\n"))
		if err != nil || size < 0 || size > 1<<20 {
			return nil, fmt.Errorf("bad bulk length %q", head)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args = append(args, string(buf[:size]))
	}
	return args, nil
}

// etcdPort is the port of etcd's first --listen-client-urls URL (default 2379).
func etcdPort(args []string) uint16 {
	for i, a := range args {
		val, ok := strings.CutPrefix(a, "--listen-client-urls=")
		if !ok && a == "--listen-client-urls" && i+1 < len(args) {
			val, ok = args[i+1], true
		}
		if ok {
			first, _, _ := strings.Cut(val, ",")
			if p, ok := parsePort(first[strings.LastIndex(first, ":")+1:]); ok {
				return p
			}
		}
	}
	return 2379
}
