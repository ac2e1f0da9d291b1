package doctor

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// checkWritableDir checks that minikubelet can create files in dir (given with flag) by creating
// and removing one. A directory that does not exist yet is fine if minikubelet can create it:
// then its nearest existing parent is tried. Nothing is left behind.
func checkWritableDir(flag, dir string) Result {
	existing := dir
	for {
		fi, err := os.Stat(existing)
		if err == nil && !fi.IsDir() {
			return Result{Status: Fail, Message: fmt.Sprintf("%s %s cannot be created: %s is not a directory", flag, dir, existing),
				Fix: fmt.Sprintf("choose another %s, or move %s away", flag, existing)}
		}
		if err == nil {
			break
		}
		parent := filepath.Dir(existing)
		// Not there (or a parent is a file, ENOTDIR): look at the parent, which MkdirAll would create it in.
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) || parent == existing {
			return Result{Status: Fail, Message: fmt.Sprintf("%s %s: %v", flag, dir, err), Fix: fmt.Sprintf("choose another %s", flag)}
		}
		existing = parent
	}
	f, err := os.CreateTemp(existing, ".minikubelet-doctor-*")
	if err != nil {
		return Result{Status: Fail, Message: fmt.Sprintf("%s %s is not writable: %v", flag, dir, err),
			Fix: fmt.Sprintf("run as a user who may write there (the default --root-dir /var/lib/minikubelet needs root), or choose a writable %s", flag)}
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return Result{Status: Fail, Message: fmt.Sprintf("%s %s: cannot remove the test file %s: %v", flag, dir, name, err),
			Fix: fmt.Sprintf("remove %s, and check the directory's permissions", name)}
	}
	if existing == dir {
		return Result{Status: OK, Message: fmt.Sprintf("%s %s is writable", flag, dir)}
	}
	return Result{Status: OK, Message: fmt.Sprintf("%s %s does not exist yet; minikubelet can create it (%s is writable)", flag, dir, existing)}
}

// checkPortFree listens on address:port, where the kubelet API will listen, and closes at once.
func checkPortFree(address string, port int32) Result {
	addr := net.JoinHostPort(address, strconv.Itoa(int(port)))
	l, err := net.Listen("tcp", addr)
	if err == nil {
		l.Close()
		return Result{Status: OK, Message: fmt.Sprintf("kubelet API address %s is free (--address, --port)", addr)}
	}
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return Result{Status: Fail, Message: fmt.Sprintf("kubelet API port %d is in use (%s; --port)", port, addr),
			Fix: fmt.Sprintf("find the process that listens on it: ss -ltnp 'sport = :%d' (another kubelet or minikubelet?);\n"+
				"stop it, or choose another --port", port)}
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return Result{Status: Fail, Message: fmt.Sprintf("--address %s is not an address of this machine (%v)", address, err),
			Fix: "use one of this machine's addresses (ip -brief address), 127.0.0.1 or 0.0.0.0"}
	case errors.Is(err, syscall.EACCES):
		return Result{Status: Fail, Message: fmt.Sprintf("kubelet API port %d may not be used by this user (%v)", port, err),
			Fix: "ports below 1024 need root: use the kubelet's --port 10250"}
	}
	return Result{Status: Fail, Message: fmt.Sprintf("cannot listen on %s for the kubelet API: %v", addr, err), Fix: "check --address and --port"}
}
