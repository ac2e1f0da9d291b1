package fakeruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// `serve` makes a fake container answer for real on its pod IP, so that the kubelet's httpGet,
// tcpSocket and grpc probes, port-forward and curl reach something the container serves. Pod IPs
// are loopback addresses (DefaultPodCIDR), so listening needs no change to the host's network.
// doc.go's "Serving" has the grammar.

// serveSpec is a parsed serve (or httpd) command.
type serveSpec struct {
	proto  string  // "http", "tcp" or "grpc"
	port   uint16  // on the pod IP
	routes []route // http; none: every path answers 200
	health string  // grpc: "SERVING", "NOT_SERVING", or a file: SERVING while it exists
}

// route is one PATH=ANSWER of serve http.
type route struct {
	pattern string // a URL path; one ending in "/" matches every path below it
	code    int    // the answer is this status, or
	file    string // this file of the container (below a directory: the rest of the URL path)
}

func (s *serveSpec) String() string {
	words := []string{"serve", s.proto, strconv.Itoa(int(s.port))}
	for _, r := range s.routes {
		answer := r.file
		if answer == "" {
			answer = strconv.Itoa(r.code)
		}
		words = append(words, r.pattern+"="+answer)
	}
	if s.health != "" {
		words = append(words, s.health)
	}
	return strings.Join(words, " ")
}

const serveUsage = "serve: usage: serve http PORT [/PATH=CODE|/PATH=FILE]… | serve tcp PORT | serve grpc PORT [SERVING|NOT_SERVING|FILE] | serve redis PORT"

// parseServe parses `serve PROTO PORT …` or busybox's `httpd [-f] [-p [IP:]PORT] [-h DIR]`
// (without -f, httpd goes to the background). On a mistake spec is nil and msg says why.
func parseServe(name string, args []string) (spec *serveSpec, bg bool, msg string) {
	if name == "httpd" {
		spec, bg = &serveSpec{proto: "http", port: 80}, true
		dir := "."
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case a == "-f":
				bg = false
			case (a == "-p" || a == "-h") && i+1 < len(args):
				i++
				if a == "-h" {
					dir = args[i]
					continue
				}
				p, ok := parsePort(args[i][strings.LastIndex(args[i], ":")+1:])
				if !ok {
					return nil, false, fmt.Sprintf("httpd: bad port '%s'", args[i])
				}
				spec.port = p
			default:
				return nil, false, "httpd: usage: httpd [-f] [-p [IP:]PORT] [-h DIR] (the fake runtime's httpd knows no other options)"
			}
		}
		spec.routes = []route{{pattern: "/", file: dir}}
		return spec, bg, ""
	}
	if len(args) < 2 {
		return nil, false, serveUsage
	}
	port, ok := parsePort(args[1])
	if !ok {
		return nil, false, fmt.Sprintf("serve: bad port '%s': give 1 to 65535", args[1])
	}
	spec = &serveSpec{proto: args[0], port: port}
	switch rest := args[2:]; spec.proto {
	case "tcp", "redis":
		if len(rest) > 0 {
			return nil, false, serveUsage
		}
	case "grpc":
		switch {
		case len(rest) > 1:
			return nil, false, serveUsage
		case len(rest) == 0:
			spec.health = "SERVING"
		case rest[0] == "SERVING" || rest[0] == "NOT_SERVING" || strings.HasPrefix(rest[0], "/"):
			spec.health = rest[0]
		default:
			return nil, false, fmt.Sprintf("serve: grpc health %q: give SERVING, NOT_SERVING or a file", rest[0])
		}
	case "http":
		for _, r := range rest {
			pattern, answer, ok := strings.Cut(r, "=")
			code, err := strconv.Atoi(answer)
			switch {
			case !ok || !strings.HasPrefix(pattern, "/"):
				return nil, false, fmt.Sprintf("serve: route %q: write /PATH=CODE or /PATH=FILE", r)
			case strings.HasPrefix(answer, "/"):
				spec.routes = append(spec.routes, route{pattern: pattern, file: answer})
			case err != nil || code < 200 || code > 599:
				return nil, false, fmt.Sprintf("serve: route %q: the answer must be a status code 200-599 or a file", r)
			default:
				spec.routes = append(spec.routes, route{pattern: pattern, code: code})
			}
		}
	default:
		return nil, false, serveUsage
	}
	return spec, false, ""
}

func parsePort(s string) (uint16, bool) {
	p, err := strconv.ParseUint(s, 10, 16)
	return uint16(p), err == nil && p > 0
}

// server is one listener a container serves on.
type server struct {
	addr netip.AddrPort
	stop func() // closes the listener and every connection, then waits for its goroutines
}

// listen starts serving spec on the view's pod IP. Its error is what the command prints.
func listen(spec *serveSpec, v view) (*server, error) {
	ip := v.serveIP
	if !ip.IsValid() || !ip.IsLoopback() {
		return nil, fmt.Errorf("serve: the pod IP %v is not a loopback address, and the fake runtime listens only on loopback pod IPs (nothing is changed in the host's network): "+
			"run minikubelet without --pod-cidr (default %s) or with a range inside 127.0.0.0/8", ip, DefaultPodCIDR)
	}
	addr := netip.AddrPortFrom(ip, spec.port)
	l, err := net.Listen("tcp", addr.String())
	if err != nil {
		hint := ""
		switch {
		case errors.Is(err, syscall.EADDRINUSE):
			hint = fmt.Sprintf(": another container of this pod, or a host process listening on *:%d, has the port (pod IPs are addresses of the host)", spec.port)
		case errors.Is(err, syscall.EACCES):
			hint = fmt.Sprintf(": ports below 1024 need root, or `sudo sysctl net.ipv4.ip_unprivileged_port_start=%d` (pod IPs are addresses of the host)", spec.port)
		}
		return nil, fmt.Errorf("serve: can't listen on %s: %s%s", addr, errText(err), hint)
	}
	var wg sync.WaitGroup
	srv := &server{addr: addr}
	switch spec.proto {
	case "http":
		hs := &http.Server{Handler: httpHandler(spec.routes, v.fs), ReadHeaderTimeout: 10 * time.Second}
		wg.Go(func() { _ = hs.Serve(l) })
		srv.stop = func() { _ = hs.Close(); wg.Wait() }
	case "grpc":
		gs := grpc.NewServer()
		healthpb.RegisterHealthServer(gs, healthServer{spec: spec, fs: v.fs})
		wg.Go(func() { _ = gs.Serve(l) })
		srv.stop = func() { gs.Stop(); wg.Wait() }
	case "redis":
		srv.stop = serveConns(l, answerRedis)
	default:
		srv.stop = serveConns(l, func(c net.Conn) { _, _ = io.Copy(c, c) })
	}
	return srv, nil
}

// httpHandler answers every request with answerHTTP.
func httpHandler(routes []route, fs *rootfs) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		code, body := answerHTTP(routes, fs, req.URL.Path)
		w.Header().Set("Content-Type", http.DetectContentType(body))
		w.WriteHeader(code)
		if req.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	})
}

// answerHTTP is serve http's answer for a URL path: the route with the longest matching pattern
// decides (no routes: 200 everywhere); a file answers 200 with its content while it exists and
// 404 otherwise, a directory with its index.html.
func answerHTTP(routes []route, fs *rootfs, urlPath string) (int, []byte) {
	urlPath = path.Clean("/" + urlPath)
	var best *route
	for i, r := range routes {
		match := urlPath == r.pattern || (strings.HasSuffix(r.pattern, "/") && strings.HasPrefix(urlPath+"/", r.pattern))
		if match && (best == nil || len(r.pattern) > len(best.pattern)) {
			best = &routes[i]
		}
	}
	switch {
	case len(routes) == 0:
		return http.StatusOK, []byte("OK\n")
	case best == nil:
		return http.StatusNotFound, []byte("404 page not found\n")
	case best.file == "":
		return best.code, []byte(http.StatusText(best.code) + "\n")
	}
	file := best.file
	if strings.HasSuffix(best.pattern, "/") {
		file = path.Join(file, strings.TrimPrefix(urlPath, strings.TrimSuffix(best.pattern, "/")))
	}
	if kind, err := fs.stat(file); err == nil && kind == kindDir {
		file = path.Join(file, "index.html")
	}
	data, err := fs.readFile(file)
	switch {
	case errors.Is(err, syscall.ENOENT):
		return http.StatusNotFound, []byte("404 page not found\n")
	case err != nil:
		return http.StatusInternalServerError, []byte(errText(err) + "\n")
	}
	return http.StatusOK, data
}

// healthServer is grpc.health.v1 for serve grpc: every service has the spec's status.
type healthServer struct {
	healthpb.UnimplementedHealthServer
	spec *serveSpec
	fs   *rootfs
}

func (h healthServer) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	switch h.spec.health {
	case "SERVING":
		st = healthpb.HealthCheckResponse_SERVING
	case "NOT_SERVING":
	default:
		if _, err := h.fs.stat(h.spec.health); err == nil {
			st = healthpb.HealthCheckResponse_SERVING
		}
	}
	return &healthpb.HealthCheckResponse{Status: st}, nil
}

// serveConns runs handle on each connection accepted on l (then closes it), and returns the
// function that stops it: serve tcp echoes until the client closes its side, serve redis answers.
func serveConns(l net.Listener, handle func(net.Conn)) (stop func()) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	stopped := false
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if stopped { // accepted just before the listener closed
				mu.Unlock()
				_ = c.Close()
				continue
			}
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				handle(c)
				_ = c.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			})
		}
	})
	return func() {
		_ = l.Close()
		mu.Lock()
		stopped = true
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
}
