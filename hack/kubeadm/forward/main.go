// Command forward copies TCP connections between two endpoints, each "tcp:HOST:PORT" or
// "unix:PATH", until the process --exit-with names is gone. make kubeadm-up runs two: one inside
// the cluster's network namespace (unix socket → the API server on the node's address) and one on
// the host (127.0.0.1:PORT → that unix socket), so that the host's kubectl reaches the API server
// and nothing else of the namespace is exposed. A unix socket crosses network namespaces because
// it is a file; no process needs to enter the namespace.
//
//	forward --listen tcp:127.0.0.1:16443 --to unix:/…/apiserver.sock --exit-with 1234
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "forward:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("forward", flag.ContinueOnError)
	listen := fs.String("listen", "", "where to accept: tcp:127.0.0.1:PORT (loopback only) or unix:PATH")
	to := fs.String("to", "", "where to connect: tcp:HOST:PORT or unix:PATH")
	exitWith := fs.Int("exit-with", 0, "exit when the process with this PID is gone (0: never)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	lnet, laddr, err := endpoint(*listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	tnet, taddr, err := endpoint(*to)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	if lnet == "tcp" && !loopback(laddr) {
		return fmt.Errorf("--listen %s: only a loopback address (127.0.0.1 or [::1]) may be used", *listen)
	}
	if lnet == "unix" {
		_ = os.Remove(laddr) // a socket file left by an earlier run
	}
	ln, err := net.Listen(lnet, laddr)
	if err != nil {
		return err
	}
	if *exitWith > 0 {
		go exitWhenGone(*exitWith, ln)
	}
	fmt.Printf("forwarding %s to %s\n", *listen, *to)
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go pipe(c, tnet, taddr)
	}
}

// endpoint splits "tcp:HOST:PORT" or "unix:PATH".
func endpoint(s string) (network, addr string, err error) {
	network, addr, ok := strings.Cut(s, ":")
	if !ok || addr == "" || (network != "tcp" && network != "unix") {
		return "", "", fmt.Errorf("%q is not tcp:HOST:PORT or unix:PATH", s)
	}
	return network, addr, nil
}

func loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}

// pipe connects c to the target and copies both ways until either side closes.
func pipe(c net.Conn, network, addr string) {
	defer func() { _ = c.Close() }()
	t, err := net.DialTimeout(network, addr, 10*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "forward: connect:", err)
		return
	}
	defer func() { _ = t.Close() }()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(t, c)
	go cp(c, t)
	<-done
	<-done
}

// exitWhenGone closes the listener (run returns) once process pid no longer exists.
func exitWhenGone(pid int, ln net.Listener) {
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(time.Second)
	}
	_ = ln.Close()
}
