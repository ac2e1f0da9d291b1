package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The labs send students into our code by name: "| the relist | `pkg/pleg/generic.go` `Run`,
// `Relist` | …", "`break pleg.computeEvents`", "/work/main/pkg/pleg/generic.go:372". Code moves;
// a lab that names a file or a function that is gone sends the student nowhere. TestLabCodeRefs
// reads every lab README, and docs/conformance-map.md (each conformance Describe group → our
// code: refDocs), and fails, naming file, line and reference, when
//
//   - a path in the "minikubelet" (ours) column of a "| what | minikubelet | upstream |" table does
//     not exist in this repository (the upstream column names k8s.io/kubernetes paths: not checked);
//   - an identifier that follows one of our .go files in that cell — `pkg/x/y.go` `A`, `(*T).B` —
//     is not declared in that file as a func, method, type, const or var (words in parentheses
//     are commentary and not checked; a snake_case name is a metric, found as its string literals);
//   - a breakpoint — a column headed "breakpoint" (its first code span), or `break pkg.Func`
//     anywhere — names a function or method (pkg.Func, pkg.(*T).Method, pkg.T.Method) that our
//     package of that name does not have;
//   - a path in a column headed "upstream…" (k8s.io/kubernetes paths: pkg/…, cmd/…, test/…,
//     third_party/…, staging/src/k8s.io/<module>/…) is not in the upstream module of the version
//     go.mod pins, as the Go module cache holds it (`go mod download k8s.io/kubernetes@v1.36.3`;
//     without it in the cache these are only logged as not checked); the paths after a span
//     naming another module (`sigs.k8s.io/metrics-server@v0.8.0`) are that module's: not checked;
//   - a file.go:NNN reference names one of our files that is gone or shorter than NNN lines. Line
//     numbers in sample Delve output are illustrative, so a line that is no longer inside a
//     function is only logged.
//
// It needs no cluster: only the README files and the Go sources of this repository.
func TestLabCodeRefs(t *testing.T) {
	root := repoRootForRefs(t)
	readmes, err := filepath.Glob(filepath.Join(root, "labs", "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readmes = append(readmes, filepath.Join(root, "labs", "README.md"))
	for _, doc := range refDocs {
		readmes = append(readmes, filepath.Join(root, doc))
	}
	idx := newCodeIndex(root)
	if note := idx.findUpstream(); note != "" {
		t.Log(note)
	}
	checked := 0
	for _, readme := range readmes {
		rel, _ := filepath.Rel(root, readme)
		refs, err := labRefsIn(readme)
		if err != nil {
			t.Fatalf("read %s: %v", rel, err)
		}
		text, _ := os.ReadFile(readme)
		for _, r := range refs {
			r.tests = strings.Contains(string(text), "dlv test ")
			checked++
			problem, note := idx.check(r)
			if problem != "" {
				t.Errorf("%s:%d: %s %q: %s", rel, r.line, r.kind, r.text, problem)
			}
			if note != "" {
				t.Logf("%s:%d: note: %s %q: %s", rel, r.line, r.kind, r.text, note)
			}
		}
	}
	if checked == 0 {
		t.Fatalf("found no code references in %d lab READMEs: has the table format changed? (header \"| what | minikubelet | upstream |\")", len(readmes))
	}
	t.Logf("checked %d code references in %d lab READMEs and docs", checked, len(readmes))
}

// refDocs are the documents besides the labs' READMEs whose code references are checked.
var refDocs = []string{"docs/conformance-map.md"}

// repoRootForRefs is the repository's top directory: go test runs in labs/check.
func repoRootForRefs(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod in %s: run this test from labs/check (go test ./labs/check/)", root)
	}
	return root
}

// A labRef is one reference a lab makes to our code.
type labRef struct {
	line int
	kind refKind
	text string // as written, for the message
	file string // refPath: the repo path; refIdent: the file it follows; refFileLine: the path as written
	num  int    // refFileLine: the line number
	// tests: the lab runs Delve on a test binary (`dlv test`, lab 00), so a breakpoint may name a
	// function of a _test.go file; a lab on the running minikubelet (`make debug`) may not.
	tests bool
}

type refKind string

const (
	refPath       refKind = "path"
	refIdent      refKind = "identifier"
	refBreakpoint refKind = "breakpoint"
	refFileLine   refKind = "file:line"
	refUpstream   refKind = "upstream path"
)

var (
	// breakRE finds Delve break commands: "break pleg.computeEvents", "(dlv) break kubelet.(*Kubelet).x".
	breakRE = regexp.MustCompile("\\bbreak\\s+([a-z][a-z0-9_]*\\.[^\\s`]+)")
	// fileLineRE finds "generic.go:372", "/work/main/pkg/pleg/generic.go:372".
	fileLineRE = regexp.MustCompile(`([\w./@-]*\.go):(\d+)\b`)
	// repoPathRE: a path into our tree, as the ours column writes it.
	repoPathRE = regexp.MustCompile(`^(pkg|cmd|hack|test|labs|docs|fakeruntime|internal|tools|testing)/[\w./-]*$`)
	// upstreamPathRE: a path into k8s.io/kubernetes, as an upstream column writes it.
	upstreamPathRE = regexp.MustCompile(`^(pkg|cmd|test|third_party|plugin|staging/src/k8s\.io/[\w.-]+)/[\w./-]*$`)
	// identRE: A, (*T).M, T.M.
	identRE = regexp.MustCompile(`^(?:\(\*?([A-Za-z_]\w*)\)\.|([A-Za-z_]\w*)\.)?([A-Za-z_]\w*)$`)
)

// labRefsIn reads one README and returns every code reference it makes.
func labRefsIn(readme string) ([]labRef, error) {
	f, err := os.Open(readme)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var refs []labRef
	var header []string // the current table's header cells; nil outside a table
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "|") {
			cells := tableCells(trimmed)
			switch {
			case header == nil:
				header = cells
			case isSeparatorRow(cells):
			default:
				refs = append(refs, tableRefs(n, header, cells)...)
			}
		} else {
			header = nil
		}
		for _, m := range breakRE.FindAllStringSubmatch(line, -1) {
			refs = append(refs, labRef{line: n, kind: refBreakpoint, text: m[1]})
		}
		for _, m := range fileLineRE.FindAllStringSubmatch(line, -1) {
			num, _ := strconv.Atoi(m[2])
			refs = append(refs, labRef{line: n, kind: refFileLine, text: m[0], file: m[1], num: num})
		}
	}
	return refs, sc.Err()
}

// tableRefs returns the references of one table row: paths and identifiers in the ours column,
// the breakpoint in the first column of a breakpoint table.
func tableRefs(line int, header, cells []string) []labRef {
	var refs []labRef
	for i, h := range header {
		if i >= len(cells) {
			break
		}
		switch h = strings.ToLower(strings.TrimSpace(h)); {
		case h == "minikubelet" || h == "ours":
			refs = append(refs, oursCellRefs(line, cells[i])...)
		case strings.HasPrefix(h, "upstream"):
			for _, s := range codeSpans(cells[i]) {
				if strings.Contains(s.text, "@") {
					break // `sigs.k8s.io/metrics-server@v0.8.0` `pkg/…`: the paths after it are that module's
				}
				if upstreamPathRE.MatchString(s.text) {
					refs = append(refs, labRef{line: line, kind: refUpstream, text: s.text, file: s.text})
				}
			}
		case h == "breakpoint":
			if spans := codeSpans(cells[i]); len(spans) > 0 {
				spec, _, _ := strings.Cut(spans[0].text, " if ") // a condition follows the location
				if !strings.HasPrefix(spec, "break ") {          // else breakRE has it already
					refs = append(refs, labRef{line: line, kind: refBreakpoint, text: strings.TrimSpace(spec)})
				}
			}
		}
	}
	return refs
}

// oursCellRefs reads a cell like "`pkg/kubelet/syncloop.go` `syncLoopIteration` (the `plegCh` case),
// `dispatch`; `pkg/x/y.go`": every repo path, and the identifiers that follow a .go file up to
// the next path or ";". Code inside parentheses is commentary.
func oursCellRefs(line int, cell string) []labRef {
	var refs []labRef
	goFile := ""
	for _, s := range codeSpans(cell) {
		if s.afterSemicolon {
			goFile = ""
		}
		switch {
		case s.inParens:
		case repoPathRE.MatchString(s.text):
			refs = append(refs, labRef{line: line, kind: refPath, text: s.text, file: s.text})
			goFile = ""
			if strings.HasSuffix(s.text, ".go") {
				goFile = s.text
			}
		case goFile != "" && identRE.MatchString(s.text):
			refs = append(refs, labRef{line: line, kind: refIdent, text: s.text, file: goFile})
		}
	}
	return refs
}

// A codeSpan is the text between a pair of backticks in a table cell.
type codeSpan struct {
	text           string
	inParens       bool // inside "( … )" written outside backticks
	afterSemicolon bool // a ";" outside backticks came since the previous span
}

func codeSpans(cell string) []codeSpan {
	var spans []codeSpan
	depth, semicolon := 0, false
	for i := 0; i < len(cell); i++ {
		switch cell[i] {
		case '(':
			depth++
		case ')':
			depth = max(depth-1, 0)
		case ';':
			semicolon = true
		case '`':
			end := strings.IndexByte(cell[i+1:], '`')
			if end < 0 {
				return spans
			}
			spans = append(spans, codeSpan{text: cell[i+1 : i+1+end], inParens: depth > 0, afterSemicolon: semicolon})
			semicolon = false
			i += end + 1
		}
	}
	return spans
}

// tableCells splits "| a | `b|c` | d |" into its cells; a "|" inside backticks is text.
func tableCells(row string) []string {
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var cells []string
	var cur strings.Builder
	inCode := false
	for _, r := range row {
		switch {
		case r == '`':
			inCode = !inCode
		case r == '|' && !inCode:
			cells = append(cells, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(cells, cur.String())
}

func isSeparatorRow(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(strings.TrimSpace(c), "-:") != "" {
			return false
		}
	}
	return true
}

// codeIndex answers questions about our Go sources, parsing each file and package once.
type codeIndex struct {
	root string
	// modCache is the Go module cache and kubeVersion the k8s.io/kubernetes version go.mod's
	// k8s.io/api pins (v0.36.3 → v1.36.3), set by findUpstream; modCache "": upstream paths are
	// not checked.
	modCache, kubeVersion string
	files                 map[string]*goFileDecls // by repo path
	packages              map[string][]string     // package name → directories (repo paths) of our Go trees
	byBase                map[string][]string     // file base name → repo paths of our .go files
}

// goFileDecls is what one Go file declares.
type goFileDecls struct {
	names   map[string]bool // funcs, types, consts, vars; methods as "T.M" and also "M"
	plain   map[string]bool // funcs that are not methods
	strings map[string]bool // string literals, for metric names
	funcs   [][2]int        // first and last line of each func and method
	lines   int
	err     error
}

func newCodeIndex(root string) *codeIndex {
	idx := &codeIndex{root: root, files: map[string]*goFileDecls{}, packages: map[string][]string{}, byBase: map[string][]string{}}
	for _, top := range []string{"pkg", "cmd", "hack", "fakeruntime", "internal", "tools", "testing"} {
		_ = filepath.WalkDir(filepath.Join(root, top), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			idx.byBase[filepath.Base(rel)] = append(idx.byBase[filepath.Base(rel)], rel)
			if top == "hack" {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.PackageClauseOnly)
			if err != nil {
				return nil
			}
			dir := filepath.ToSlash(filepath.Dir(rel))
			if dirs := idx.packages[f.Name.Name]; len(dirs) == 0 || dirs[len(dirs)-1] != dir {
				idx.packages[f.Name.Name] = append(dirs, dir)
			}
			return nil
		})
	}
	return idx
}

// decls parses one of our files (repo path) once.
func (idx *codeIndex) decls(rel string) *goFileDecls {
	if d, ok := idx.files[rel]; ok {
		return d
	}
	d := &goFileDecls{names: map[string]bool{}, plain: map[string]bool{}, strings: map[string]bool{}}
	idx.files[rel] = d
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(idx.root, rel), nil, 0)
	if err != nil {
		d.err = err
		return d
	}
	d.lines = fset.File(f.Pos()).LineCount()
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			d.names[decl.Name.Name] = true
			if decl.Recv == nil {
				d.plain[decl.Name.Name] = true
			} else if len(decl.Recv.List) == 1 {
				d.names[receiverType(decl.Recv.List[0].Type)+"."+decl.Name.Name] = true
			}
			d.funcs = append(d.funcs, [2]int{fset.Position(decl.Pos()).Line, fset.Position(decl.End()).Line})
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					d.names[spec.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						d.names[n.Name] = true
					}
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				d.strings[s] = true
			}
		}
		return true
	})
	return d
}

// receiverType is T for a receiver of type T, *T, T[X] or *T[X].
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// declares says whether the file declares ident: "A", "(*T).M" or "T.M".
func (d *goFileDecls) declares(ident string) bool {
	m := identRE.FindStringSubmatch(ident)
	if m == nil {
		return false
	}
	typ, name := m[1]+m[2], m[3]
	if typ != "" {
		return d.names[typ+"."+name]
	}
	return d.names[name] || d.isMetric(name)
}

// isMetric: a snake_case name is a Prometheus metric, declared as its name or as
// Subsystem "kubelet" + Name "pleg_relist_duration_seconds".
func (d *goFileDecls) isMetric(name string) bool {
	if !strings.Contains(name, "_") || strings.ToLower(name) != name {
		return false
	}
	if d.strings[name] {
		return true
	}
	for s := range d.strings {
		if rest, ok := strings.CutPrefix(name, s+"_"); ok && s != "" && d.strings[rest] {
			return true
		}
	}
	return false
}

// check returns what is wrong with r ("" if nothing) and a note worth logging.
func (idx *codeIndex) check(r labRef) (problem, note string) {
	switch r.kind {
	case refPath:
		if _, err := os.Stat(filepath.Join(idx.root, r.file)); err != nil {
			return "no such file or directory in this repository: move the lab to where the code is now", ""
		}
	case refIdent:
		if _, err := os.Stat(filepath.Join(idx.root, r.file)); err != nil {
			return "", "" // the path reference before it says so
		}
		d := idx.decls(r.file)
		if d.err != nil {
			return fmt.Sprintf("cannot parse %s: %v", r.file, d.err), ""
		}
		if !d.declares(r.text) {
			return fmt.Sprintf("not declared in %s (as a func, method, type, const or var): name the file that has it now", r.file), ""
		}
	case refBreakpoint:
		return idx.checkBreakpoint(r.text, r.tests), ""
	case refFileLine:
		return idx.checkFileLine(r)
	case refUpstream:
		return idx.checkUpstream(r.file), ""
	}
	return "", ""
}

// findUpstream sets modCache and kubeVersion when the module cache holds k8s.io/kubernetes at the
// version go.mod pins; else it returns why upstream paths are not checked.
func (idx *codeIndex) findUpstream() string {
	mod, err := os.ReadFile(filepath.Join(idx.root, "go.mod"))
	if err != nil {
		return fmt.Sprintf("upstream paths not checked: %v", err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/api v0\.(\d+\.\d+)\s*$`).FindSubmatch(mod)
	if m == nil {
		return "upstream paths not checked: go.mod requires no k8s.io/api v0.X.Y"
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return fmt.Sprintf("upstream paths not checked: go env GOMODCACHE: %v", err)
	}
	cache, version := strings.TrimSpace(string(out)), "v1."+string(m[1])
	if _, err := os.Stat(filepath.Join(cache, "k8s.io", "kubernetes@"+version)); err != nil {
		return fmt.Sprintf("upstream paths not checked: k8s.io/kubernetes@%s is not in the module cache %s (go mod download k8s.io/kubernetes@%s)", version, cache, version)
	}
	idx.modCache, idx.kubeVersion = cache, version
	return ""
}

// checkUpstream says what is wrong with an upstream path: it must be in k8s.io/kubernetes, or for
// staging/src/k8s.io/<module>/… in that module at the matching v0 version.
func (idx *codeIndex) checkUpstream(p string) string {
	if idx.modCache == "" {
		return ""
	}
	dir := filepath.Join(idx.modCache, "k8s.io", "kubernetes@"+idx.kubeVersion, p)
	if rest, ok := strings.CutPrefix(p, "staging/src/k8s.io/"); ok {
		module, inModule, _ := strings.Cut(rest, "/")
		dir = filepath.Join(idx.modCache, "k8s.io", module+"@v0"+strings.TrimPrefix(idx.kubeVersion, "v1"), inModule)
	}
	if _, err := os.Stat(dir); err != nil {
		return fmt.Sprintf("not in k8s.io/kubernetes %s (looked for %s): name the file upstream has now", idx.kubeVersion, dir)
	}
	return ""
}

// breakRefRE: pkg.Func, pkg.(*T).Method, pkg.T.Method.
var breakRefRE = regexp.MustCompile(`^([a-z][a-z0-9_]*)\.((?:\(\*?[A-Za-z_]\w*\)\.|[A-Za-z_]\w*\.)?[A-Za-z_]\w*)$`)

func (idx *codeIndex) checkBreakpoint(spec string, tests bool) string {
	m := breakRefRE.FindStringSubmatch(spec)
	if m == nil {
		return "not a Delve location this test understands (pkg.Func, pkg.(*T).Method, pkg.T.Method)"
	}
	pkg, fn := m[1], m[2]
	dirs := idx.packages[pkg]
	if len(dirs) == 0 {
		return fmt.Sprintf("no package %q under pkg/, cmd/, hack/, fakeruntime/, internal/, tools/ or testing/", pkg)
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(idx.root, dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") && !tests {
				continue
			}
			rel, _ := filepath.Rel(idx.root, f)
			if d := idx.decls(filepath.ToSlash(rel)); d.err == nil && d.hasFunc(fn) {
				return ""
			}
		}
	}
	return fmt.Sprintf("package %s (%s) has no function or method %s: the breakpoint would not be set", pkg, strings.Join(dirs, ", "), fn)
}

// hasFunc says whether the file declares the function "F" (not a method: Delve needs the type
// for those) or the method "(*T).M" / "T.M" (Delve finds either receiver kind).
func (d *goFileDecls) hasFunc(fn string) bool {
	m := identRE.FindStringSubmatch(fn)
	if m == nil {
		return false
	}
	if typ := m[1] + m[2]; typ != "" {
		return d.names[typ+"."+m[3]]
	}
	return d.plain[m[3]]
}

func (idx *codeIndex) checkFileLine(r labRef) (problem, note string) {
	p := r.file
	switch {
	case strings.Contains(p, "@"):
		return "", "" // the module cache: upstream code
	case !strings.Contains(p, "/"):
		found := idx.byBase[p]
		sort.Strings(found)
		switch len(found) {
		case 0:
			return "", "" // not one of our file names: upstream code
		case 1:
			p = found[0]
		default:
			return "", fmt.Sprintf("names one of %d files (%s): not checked; write its directory", len(found), strings.Join(found, ", "))
		}
	default:
		p = oursFromPath(p)
		if p == "" {
			return "", ""
		}
	}
	if _, err := os.Stat(filepath.Join(idx.root, p)); err != nil {
		return fmt.Sprintf("%s does not exist any more: take the sample output again", p), ""
	}
	d := idx.decls(p)
	if d.err != nil {
		return fmt.Sprintf("cannot parse %s: %v", p, d.err), ""
	}
	if r.num > d.lines {
		return fmt.Sprintf("%s has only %d lines: take the sample output again", p, d.lines), ""
	}
	for _, fn := range d.funcs {
		if fn[0] <= r.num && r.num <= fn[1] {
			return "", ""
		}
	}
	return "", fmt.Sprintf("line %d of %s is no longer inside a function (the code moved; sample output is illustrative)", r.num, p)
}

// oursFromPath turns "/work/main/pkg/pleg/generic.go" or "pkg/pleg/generic.go" into the repo
// path "pkg/pleg/generic.go"; "" when the path is not into our tree.
func oursFromPath(p string) string {
	for _, top := range []string{"pkg/", "cmd/", "hack/", "fakeruntime/", "internal/", "tools/", "testing/"} {
		if strings.HasPrefix(p, top) {
			return p
		}
	}
	// Inside a longer path (a stack trace's /work/main/pkg/…), only names no Go toolchain or
	// cache path holds: /internal/ and /tools/ appear in GOROOT and ~/.cache paths too.
	for _, top := range []string{"pkg/", "cmd/", "hack/", "fakeruntime/"} {
		if i := strings.Index(p, "/"+top); i >= 0 {
			return p[i+1:]
		}
	}
	return ""
}

// The check itself must be able to fail: a README with stale references, against our real code.
func TestLabCodeRefsCatchStaleOnes(t *testing.T) {
	idx := newCodeIndex(repoRootForRefs(t))
	readme := filepath.Join(t.TempDir(), "README.md")
	content := strings.Join([]string{
		"| what | minikubelet | upstream (v1.36) |",
		"|---|---|---|",
		"| ok | `pkg/pleg/generic.go` `Relist`, `(*GenericPLEG).Run` (the `noSuchThing` case) | `pkg/kubelet/pleg/generic.go` `Relist` |",
		"| gone file | `pkg/pleg/reinspect.go` `RequestReinspect` | `pkg/kubelet/pleg/generic.go` |",
		"| gone identifier | `pkg/pleg/generic.go` `Relist`, `relistTwice`; `pkg/pleg/cache.go` `GetNewerThan` | — |",
		"| wrong type | `pkg/pleg/cache.go` `(*GenericPLEG).GetNewerThan` | — |",
		"",
		"| breakpoint | when it hits |",
		"|---|---|",
		"| `pleg.computeEvents if oldState != newState` | ok |",
		"| `pleg.(*GenericPLEG).RelistTwice` | gone method |",
		"| `nosuchpkg.(*Manager).Run` | no such package |",
		"| `pleg.Relist` | a method named without its type |",
		"",
		"```",
		"(dlv) break pleg.noSuchFunc",
		"   at /work/main/pkg/pleg/generic.go:99999",
		"   at /home/u/go/pkg/mod/k8s.io/kubernetes@v1.36.3/pkg/kubelet/pleg/generic.go:99999",
		"```",
		"",
		"| group | ours | upstream (k8s.io/kubernetes v1.36.3) | breakpoint |",
		"|---|---|---|---|",
		"| ok | `pkg/pleg/generic.go` `Relist` | `pkg/kubelet/pleg/generic.go`, `staging/src/k8s.io/cri-client/pkg/logs/logs.go` | `pleg.(*GenericPLEG).Relist` |",
		"| stale | — | `pkg/kubelet/pleg/reinspect.go`, `staging/src/k8s.io/cri-client/pkg/logs/gone.go`; `sigs.k8s.io/metrics-server@v0.8.0` `pkg/storage/pod.go` | `pleg.(*GenericPLEG).RelistTwice` |",
	}, "\n")
	if err := os.WriteFile(readme, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	// A module cache with the two upstream files the "ok" rows name.
	idx.modCache, idx.kubeVersion = t.TempDir(), "v1.36.3"
	for _, f := range []string{"kubernetes@v1.36.3/pkg/kubelet/pleg/generic.go", "cri-client@v0.36.3/pkg/logs/logs.go"} {
		p := filepath.Join(idx.modCache, "k8s.io", f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	refs, err := labRefsIn(readme)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, r := range refs {
		if problem, _ := idx.check(r); problem != "" {
			failed = append(failed, fmt.Sprintf("%d %s", r.line, r.text))
		}
	}
	want := []string{
		"4 pkg/pleg/reinspect.go", // its identifier RequestReinspect is not checked: the file is gone
		"5 relistTwice",
		"6 (*GenericPLEG).GetNewerThan",
		"11 pleg.(*GenericPLEG).RelistTwice",
		"12 nosuchpkg.(*Manager).Run",
		"13 pleg.Relist",
		"16 pleg.noSuchFunc",
		"17 /work/main/pkg/pleg/generic.go:99999",
		"24 pkg/kubelet/pleg/reinspect.go",
		"24 staging/src/k8s.io/cri-client/pkg/logs/gone.go",
		"24 pleg.(*GenericPLEG).RelistTwice", // a breakpoint column that is not the first
	}
	if strings.Join(failed, "\n") != strings.Join(want, "\n") {
		t.Errorf("stale references found:\n%s\nwant:\n%s", strings.Join(failed, "\n"), strings.Join(want, "\n"))
	}
}
