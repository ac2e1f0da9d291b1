package fakeruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// wget and curl GET a URL from a server this runtime's containers run, and from nothing else: no
// connection ever leaves the machine. Before dialing, the address is checked against the
// runtime's own listeners (view.reachable), and only that address is dialed (no proxy, no
// redirects). "localhost" and 127.0.0.1 are the pod's own IP, as in a pod's network namespace. A
// name is resolved by nothing: it fails as busybox's wget and curl fail without DNS or route,
// so an example that downloads from the internet does not work offline.

// fetchTimeout bounds a GET: a main program waits for it under the runtime's lock.
const fetchTimeout = 5 * time.Second

// maxFetchBytes bounds what a GET reads.
const maxFetchBytes = 1 << 20

// fetchArgs are the options of wget or curl that the fake models.
type fetchArgs struct {
	url      string
	output   string // "" : the default (wget: the URL's file name; curl: stdout); "-": stdout
	quiet    bool   // wget -q, curl -s
	showErr  bool   // curl -S
	failCode bool   // curl -f
	spider   bool   // wget --spider: check only
}

// fetchFlagsWithArg are the short options that take an argument.
var fetchFlagsWithArg = map[string]string{"wget": "OTUYPe", "curl": "omHwXdAueEr"}

// parseFetchArgs reads the options of wget or curl; unknown long options are ignored.
func parseFetchArgs(name string, args []string) (fetchArgs, error) {
	var f fetchArgs
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--spider":
			f.spider = true
		case a == "--quiet" || a == "--silent":
			f.quiet = true
		case a == "--fail":
			f.failCode = true
		case a == "--output" || a == "--output-document" || a == "--timeout" || a == "--max-time" || a == "--header" || a == "--connect-timeout":
			if i++; i < len(args) && strings.HasPrefix(a, "--output") {
				f.output = args[i]
			}
		case strings.HasPrefix(a, "--output-document=") || strings.HasPrefix(a, "--output="):
			f.output = a[strings.Index(a, "=")+1:]
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			var err error
			if i, err = f.shortFlags(name, args, i); err != nil {
				return f, err
			}
		case f.url == "":
			f.url = a
		}
	}
	if f.url == "" {
		return f, fmt.Errorf("%s: no URL given", name)
	}
	return f, nil
}

// shortFlags reads the letters of args[i] ("-qO-", "-sSf"); one that takes an argument takes
// the rest of the word, or the next word. It returns the index of the last word used.
func (f *fetchArgs) shortFlags(name string, args []string, i int) (int, error) {
	a := args[i]
	for j := 1; j < len(a); j++ {
		c := a[j]
		if strings.IndexByte(fetchFlagsWithArg[name], c) >= 0 {
			val := a[j+1:]
			if val == "" {
				if i++; i == len(args) {
					return i, fmt.Errorf("%s: option requires an argument -- '%c'", name, c)
				}
				val = args[i]
			}
			if c == 'O' || c == 'o' {
				f.output = val
			}
			return i, nil
		}
		switch c {
		case 'q', 's':
			f.quiet = f.quiet || c == 'q' || name == "curl"
			f.spider = f.spider || (c == 's' && name == "wget")
		case 'S':
			f.showErr = true
		case 'f':
			f.failCode = true
		}
	}
	return i, nil
}

// fetch runs wget or curl in the container's view and returns what it prints and its status.
func fetch(v view, name string, args []string) (stdout, stderr string, status int32) {
	f, err := parseFetchArgs(name, args)
	if err != nil {
		return "", err.Error() + "\n", 1
	}
	u, err := url.Parse(f.url)
	if err == nil && !strings.Contains(f.url, "://") {
		u, err = url.Parse("http://" + f.url)
	}
	if err != nil || u.Scheme != "http" {
		return "", fmt.Sprintf("%s: %s: the fake runtime's %s speaks only http:// to servers of its own pods\n", name, f.url, name), 1
	}
	addr, code, msg := fetchAddr(v, name, u, f)
	if msg != "" {
		return "", msg, code
	}
	if name == "wget" && !f.quiet {
		stderr = fmt.Sprintf("Connecting to %s (%s)\n", u.Host, addr)
	}
	resp, body, err := get1(addr, u)
	if err != nil {
		if name == "wget" {
			return "", stderr + fmt.Sprintf("wget: error getting response: %s\n", errText(err)), 1
		}
		return "", curlError(f, 56, fmt.Sprintf("Failure when receiving data from the peer: %s", errText(err))), 56
	}
	return fetched(v, name, f, u, resp, body, stderr)
}

// fetchAddr resolves the URL's host to an address this runtime serves, or says why not, in the
// words of busybox's wget or curl, with their status.
func fetchAddr(v view, name string, u *url.URL, f fetchArgs) (netip.AddrPort, int32, string) {
	host, port := u.Hostname(), 80
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return netip.AddrPort{}, 1, fmt.Sprintf("%s: bad port in %s\n", name, f.url)
		}
		port = int(n)
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case host == "localhost" || (err == nil && ip == netip.MustParseAddr("127.0.0.1")):
		ip = v.serveIP // the pod's loopback is the pod's own network namespace
	case err != nil:
		if name == "wget" {
			return netip.AddrPort{}, 1, fmt.Sprintf("wget: bad address '%s'\n", host)
		}
		return netip.AddrPort{}, 6, curlError(f, 6, "Could not resolve host: "+host)
	}
	addr := netip.AddrPortFrom(ip, uint16(port))
	if ip.IsValid() && ip.IsLoopback() && v.reachable != nil && v.reachable(addr) {
		return addr, 0, ""
	}
	reason := "Network is unreachable"
	if ip.IsLoopback() {
		reason = "Connection refused"
	}
	if name == "wget" {
		return addr, 1, fmt.Sprintf("wget: can't connect to remote host (%s): %s\n", ip, reason)
	}
	return addr, 7, curlError(f, 7, fmt.Sprintf("Failed to connect to %s port %d after 0 ms: %s", ip, port, reason))
}

// curlError is curl's error line, unless -s without -S silences it.
func curlError(f fetchArgs, code int, msg string) string {
	if f.quiet && !f.showErr {
		return ""
	}
	return fmt.Sprintf("curl: (%d) %s\n", code, msg)
}

// get1 GETs u from addr, and from nothing else: the dialer ignores the URL's host, there is no
// proxy, and a redirect is returned, not followed.
func get1(addr netip.AddrPort, u *url.URL) (*http.Response, []byte, error) {
	if !addr.Addr().IsLoopback() {
		return nil, nil, errors.New("not a loopback address") // fetchAddr never gives one
	}
	client := &http.Client{
		Timeout: fetchTimeout,
		Transport: &http.Transport{
			Proxy:             nil,
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "tcp", addr.String())
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Get(u.String())
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBytes))
	return resp, body, err
}

// fetched writes what a GET returned where wget or curl would.
func fetched(v view, name string, f fetchArgs, u *url.URL, resp *http.Response, body []byte, stderr string) (string, string, int32) {
	if resp.StatusCode >= 400 {
		switch {
		case name == "wget":
			return "", stderr + fmt.Sprintf("wget: server returned error: %s %s\n", resp.Proto, resp.Status), 1
		case f.failCode:
			return "", curlError(f, 22, fmt.Sprintf("The requested URL returned error: %d", resp.StatusCode)), 22
		}
	}
	out := f.output
	if out == "" && name == "wget" {
		if out = path.Base(u.Path); out == "/" || out == "." || out == "" {
			out = "index.html"
		}
	}
	switch {
	case f.spider && name == "wget":
		return "", stderr, 0
	case out == "" || out == "-":
		return string(body), stderr, 0
	}
	if err := v.fs.writeFile(out, body, false); err != nil {
		return "", stderr + fmt.Sprintf("%s: can't open '%s': %s\n", name, out, errText(err)), 1
	}
	if name == "wget" && !f.quiet {
		stderr += fmt.Sprintf("saving to '%s'\n'%s' saved\n", out, out)
	}
	return "", stderr, 0
}
