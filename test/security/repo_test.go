package security

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A finding is one place in the tree that breaks a rule: file:line and what it does.
type finding struct {
	file string // relative to the repository root, with '/'
	line int
	what string
}

func (f finding) String() string { return f.file + ":" + strconv.Itoa(f.line) + ": " + f.what }

// insecureFields are the Go fields that switch TLS verification off: crypto/tls.Config's
// InsecureSkipVerify, clientcmd's Cluster.InsecureSkipTLSVerify and rest.Config's
// TLSClientConfig.Insecure (what a kubeconfig's insecure-skip-tls-verify becomes).
var insecureFields = map[string]bool{"InsecureSkipVerify": true, "InsecureSkipTLSVerify": true, "Insecure": true}

// insecureText matches, in Go string literals and in scripts and YAML, the command-line flags and
// config keys that switch verification off: kubectl's --insecure-skip-tls-verify (=true, or with
// no value), a kubeconfig's insecure-skip-tls-verify: true, the API server's / metrics-server's
// --kubelet-insecure-tls style flags, and a JSON/YAML insecureSkipVerify: true. A message that
// only names the setting ("it sets insecure-skip-tls-verify, which is refused") is not a match.
var insecureText = regexp.MustCompile(`(?i)--insecure-skip-tls-verify(=true|[\s"']|$)|insecure-skip-tls-verify["']?\s*[:=]\s*["']?true|--kubelet-insecure|insecure-?skip-?verify["']?\s*[:=]\s*["']?true`)

// insecureDownload matches curl/wget told to skip certificate checks, in scripts.
var insecureDownload = regexp.MustCompile(`\bcurl\b[^|;&]*\s(-[a-zA-Z]*k[a-zA-Z]*|--insecure)(\s|$)|\bwget\b.*--no-check-certificate`)

// keyIdent and keyString say that a path names a private key file: a variable keyFile,
// keyPath, clientKeyFile, privateKey…, or a file name "kubelet.key", "client-key.pem",
// "private.pem". A file merely named "key" (a ConfigMap key in a test volume) is not one: this
// is the best-effort half of the check.
var (
	keyIdent  = regexp.MustCompile(`(?i)key_?(file|path|pem|name)|private_?key|priv_?key|[a-z]Key$`)
	keyString = regexp.MustCompile(`(?i)\.key$|[-_.]key\.pem$|private.*\.pem$`)
)

// writeCalls are the functions whose first argument is a file path and one of whose others is
// the mode it gets: os.WriteFile, os.OpenFile, os.Chmod, and our writeFileAtomic helpers.
var writeCalls = map[string]bool{"WriteFile": true, "OpenFile": true, "Chmod": true, "writeFileAtomic": true, "WriteFileAtomic": true}

// checkGo returns the findings in one Go file: insecure fields set to true, insecure flags in
// string literals, and key files written with a mode others can read. Comments are not code and
// are not checked.
func checkGo(name string, src []byte) ([]finding, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []finding
	add := func(n ast.Node, what string) {
		out = append(out, finding{file: name, line: fset.Position(n.Pos()).Line, what: what})
	}
	isTrue := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && id.Name == "true"
	}
	fieldName := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.Ident:
			return e.Name
		case *ast.SelectorExpr:
			return e.Sel.Name
		}
		return ""
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr: // tls.Config{InsecureSkipVerify: true}
			if name := fieldName(n.Key); insecureFields[name] && isTrue(n.Value) {
				add(n, name+" set to true")
			}
		case *ast.AssignStmt: // cfg.Insecure = true
			for i, lhs := range n.Lhs {
				if name := fieldName(lhs); insecureFields[name] && len(n.Rhs) == len(n.Lhs) && isTrue(n.Rhs[i]) {
					add(lhs, name+" set to true")
				}
			}
		case *ast.BasicLit: // exec.Command(kubectl, "--insecure-skip-tls-verify", …)
			if n.Kind == token.STRING {
				if s, err := strconv.Unquote(n.Value); err == nil && insecureText.MatchString(s) {
					add(n, "a string that switches TLS verification off: "+insecureText.FindString(s))
				}
			}
		case *ast.CallExpr: // os.WriteFile(keyFile, data, 0o644)
			if !writeCalls[fieldName(n.Fun)] || len(n.Args) < 2 || !mentionsKey(n.Args[0]) {
				return true
			}
			for _, arg := range n.Args[1:] {
				if mode, ok := modeLiteral(arg); ok && mode&0o077 != 0 {
					add(n, "a key file written with mode "+strconv.FormatInt(mode, 8)+": others can read it; keys are 0600")
				}
			}
		}
		return true
	})
	return out, nil
}

// mentionsKey reports whether an expression (a path argument) names a key file.
func mentionsKey(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			found = found || keyIdent.MatchString(n.Name)
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
				found = found || keyString.MatchString(s)
			}
		}
		return !found
	})
	return found
}

// modeLiteral returns the value of a file mode written as a literal: 0o644, 0644 or
// os.FileMode(0644).
func modeLiteral(e ast.Expr) (int64, bool) {
	if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 {
		e = call.Args[0]
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT || len(lit.Value) < 2 || lit.Value[0] != '0' || lit.Value[1] == 'x' || lit.Value[1] == 'X' {
		return 0, false
	}
	v, err := strconv.ParseInt(lit.Value, 0, 64)
	return v, err == nil && v <= 0o7777
}

// checkText returns the findings in a script, Makefile or YAML file; '#' comment lines are skipped.
func checkText(name string, src []byte) []finding {
	var out []finding
	for i, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, re := range []*regexp.Regexp{insecureText, insecureDownload} {
			if m := re.FindString(line); m != "" {
				out = append(out, finding{file: name, line: i + 1, what: "switches TLS verification off: " + strings.TrimSpace(m)})
			}
		}
	}
	return out
}

// isTextToCheck says which non-Go files hold commands or configuration.
func isTextToCheck(name string) bool {
	switch filepath.Ext(name) {
	case ".sh", ".bash", ".yaml", ".yml", ".json", ".toml", ".conf", ".service":
		return true
	}
	base := filepath.Base(name)
	return base == "Makefile" || base == "Dockerfile" || base == "run" // .ci/run
}

// An allowance is a file that may hold one kind of finding, and why. Each must still match
// something, so the list cannot outlive the code it excuses.
type allowance struct{ file, what, why string }

var allowed = []allowance{
	{"test/e2e/node/badinput_test.go", "InsecureSkipTLSVerify set to true",
		"builds an insecure bootstrap kubeconfig to check that minikubelet refuses it"},
	{"tools/doctor/apiserver_test.go", "InsecureSkipTLSVerify set to true",
		"a table case: `minikubelet doctor` must fail a kubeconfig that skips verification"},
}

func (a allowance) covers(f finding) bool {
	return f.file == a.file && strings.HasPrefix(f.what, a.what)
}

// thisFile is this test's own source, which spells out what it looks for.
func thisFile() string {
	_, file, _, _ := runtime.Caller(0)
	return file
}

// repoRoot is the directory of go.mod above this file.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir := filepath.Dir(thisFile())
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above " + thisFile())
		}
		dir = parent
	}
}

// STYLE.md "Never": TLS verification is never switched off — trust comes from the CA in the
// bootstrap kubeconfig, as in the real kubelet (which has no such switch for its API client) —
// and private keys are written 0600, as upstream's certificate file store does. This walks every
// Go file, script, Makefile and YAML file of the repository (all of them, tracked or not yet,
// without _output/, bin/ and dot-directories) and lists each offence as file:line.
func TestNoTLSVerificationEscapesOrReadableKeys(t *testing.T) {
	root := repoRoot(t)
	self, _ := filepath.Rel(root, thisFile())
	var findings []finding
	goFiles := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" || rel == "_output" || rel == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || rel == filepath.ToSlash(self) {
			return nil
		}
		switch {
		case strings.HasSuffix(path, ".go"):
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			got, err := checkGo(rel, src)
			if err != nil {
				// A file another change is halfway through writing: say so, do not hide it.
				t.Errorf("%s does not parse, so it was not checked: %v", rel, err)
				return nil
			}
			goFiles++
			findings = append(findings, got...)
		case isTextToCheck(path):
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			findings = append(findings, checkText(rel, src)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if goFiles < 50 {
		t.Fatalf("checked only %d Go files under %s: the walk is broken", goFiles, root)
	}
	used := make([]bool, len(allowed))
	for _, f := range findings {
		i := slices.IndexFunc(allowed, func(a allowance) bool { return a.covers(f) })
		if i >= 0 {
			used[i] = true
			t.Logf("allowed: %s (%s)", f, allowed[i].why)
			continue
		}
		t.Errorf("%s", f)
	}
	for i, a := range allowed {
		if !used[i] {
			t.Errorf("allowance for %s (%q) matches nothing any more: remove it from %s", a.file, a.what, self)
		}
	}
	t.Logf("checked %d Go files", goFiles)
}

// The checks themselves: each escape a course fork has shipped is found, and the safe code
// beside it is not. Without this, a broken pattern would make the test above pass forever.
func TestCheckerFindsEachEscape(t *testing.T) {
	goTests := []struct {
		name, src string
		want      string // "" for no finding
	}{
		{"tls.Config skips verification", `var c = &tls.Config{InsecureSkipVerify: true}`, "InsecureSkipVerify set to true"},
		{"kubeconfig cluster skips verification", `func f(c *api.Cluster) { c.InsecureSkipTLSVerify = true }`, "InsecureSkipTLSVerify set to true"},
		{"rest.Config skips verification", `var c = rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}`, "Insecure set to true"},
		{"kubectl flag", `var args = []string{"get", "nodes", "--insecure-skip-tls-verify"}`, "a string that switches TLS verification off"},
		{"kubectl flag =true", `var a = "--insecure-skip-tls-verify=true"`, "a string that switches TLS verification off"},
		{"kubeconfig YAML", "var k = `clusters:\n- cluster:\n    insecure-skip-tls-verify: true`", "a string that switches TLS verification off"},
		{"apiserver flag", `var a = "--kubelet-insecure-tls"`, "a string that switches TLS verification off"},
		{"key written 0644", `func f() { os.WriteFile(keyFile, pem, 0644) }`, "a key file written with mode 644"},
		{"key written 0o640 by our helper", `func f() { writeFileAtomic(filepath.Join(dir, "kubelet.key"), pem, 0o640) }`, "a key file written with mode 640"},
		{"key opened 0o644", `func f() { os.OpenFile(s.clientKeyPath, os.O_CREATE|os.O_WRONLY, os.FileMode(0o644)) }`, "a key file written with mode 644"},

		{"verification on", `var c = &tls.Config{InsecureSkipVerify: false, RootCAs: pool}`, ""},
		{"reading the setting to refuse it", `func f(c *rest.Config) bool { return c.Insecure }`, ""},
		{"a message naming the setting", `var e = errors.New("it sets insecure-skip-tls-verify; minikubelet never skips TLS verification")`, ""},
		{"--insecure-skip-tls-verify=false", `var a = "--insecure-skip-tls-verify=false"`, ""},
		{"a comment", "// InsecureSkipVerify: true is never set\nvar x = 1", ""},
		{"key written 0600", `func f() { os.WriteFile(keyFile, pem, 0o600) }`, ""},
		{"certificate written 0644", `func f() { writeFileAtomic(certFile, certPEM, 0o644) }`, ""},
		{"key data, not key path", `func f() { os.WriteFile(certFile, keyPEMless, 0o644) }`, ""},
		{"not a key: monkey", `func f() { os.WriteFile("monkey.txt", b, 0o644) }`, ""},
		{"a ConfigMap key named key", `func f() { os.WriteFile(filepath.Join(vol, "key"), b, 0o644) }`, ""},
		{"a public key", `func f() { os.WriteFile(filepath.Join(dir, "sa.pub"), b, 0o644) }`, ""},
		{"a client key PEM", `func f() { os.WriteFile(filepath.Join(dir, "client-key.pem"), b, 0o644) }`, "a key file written with mode 644"},
		{"grpc over a unix socket", `var o = grpc.WithTransportCredentials(insecure.NewCredentials())`, ""},
	}
	for _, tc := range goTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checkGo("x.go", []byte("package x\n"+tc.src+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("safe code flagged: %v", got)
			case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0].what, tc.want) || got[0].line != 2):
				t.Errorf("got %v, want one finding on x.go:2 starting %q", got, tc.want)
			}
		})
	}

	textTests := []struct {
		name, src string
		flagged   bool
	}{
		{"kubectl in a script", `"$kubectl" --insecure-skip-tls-verify get nodes`, true},
		{"a kubeconfig in YAML", `    insecure-skip-tls-verify: true`, true},
		{"curl -k", `curl -sSk https://127.0.0.1:10250/healthz`, true},
		{"curl --insecure", `curl --insecure https://x`, true},
		{"wget", `wget --no-check-certificate https://x`, true},
		{"curl with the CA", `curl -fsSL --cacert ca.crt https://x`, false},
		{"a comment", `# never: --insecure-skip-tls-verify`, false},
	}
	for _, tc := range textTests {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkText("x.sh", []byte(tc.src)); (len(got) > 0) != tc.flagged {
				t.Errorf("checkText(%q) = %v, want flagged=%t", tc.src, got, tc.flagged)
			}
		})
	}
}
