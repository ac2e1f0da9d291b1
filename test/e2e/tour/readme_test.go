package tour

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// The README's marks: an HTML comment (not rendered) on the line before a ```sh block.
const (
	terminal2 = "terminal 2"   // run beside `make run`, in order
	afterStop = "after Ctrl-C" // run once minikubelet is stopped (doctor checks its port is free)
)

var markRE = regexp.MustCompile(`^<!-- tour: (` + terminal2 + `|` + afterStop + `)\b.*-->$`)

// block is one marked fenced block of the README: when it runs and its commands.
type block struct {
	when     string
	line     int // of the README, where the block starts
	commands []command
}

// command is one command of a block, as written, and its line in the README.
type command struct {
	text string
	line int
}

// tourBlocks returns the README's marked blocks in order. A command is a line of the block (with
// its `\` continuation lines), as written, comment included; blank lines and comment lines are
// left out. A mark on anything but a ```sh block is an error, and so is a README with no marks.
func tourBlocks(readme string) ([]block, error) {
	lines := strings.Split(readme, "\n")
	var blocks []block
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "<!-- tour:") {
			continue
		}
		m := markRE.FindStringSubmatch(lines[i])
		if m == nil {
			return nil, fmt.Errorf("README.md:%d: %q: a mark says <!-- tour: %s --> or <!-- tour: %s -->", i+1, lines[i], terminal2, afterStop)
		}
		if i+1 >= len(lines) || lines[i+1] != "```sh" {
			return nil, fmt.Errorf("README.md:%d: the mark %q is not followed by a ```sh block", i+1, lines[i])
		}
		b := block{when: m[1], line: i + 2}
		cmd := command{}
		for i += 2; i < len(lines) && lines[i] != "```"; i++ {
			if cmd.text == "" {
				cmd.line = i + 1
			}
			line := strings.TrimSpace(lines[i])
			if cont, ok := strings.CutSuffix(line, `\`); ok {
				cmd.text += cont
				continue
			}
			cmd.text += line
			if cmd.text != "" && !strings.HasPrefix(cmd.text, "#") {
				b.commands = append(b.commands, cmd)
			}
			cmd = command{}
		}
		if len(b.commands) == 0 {
			return nil, fmt.Errorf("README.md:%d: the marked block has no command", b.line)
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("README.md marks no block of the set-up and tour (<!-- tour: %s --> before a ```sh block): nothing to run", terminal2)
	}
	return blocks, nil
}

func readmeBlocks(t *testing.T) []block {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := tourBlocks(string(data))
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

// withoutComment is the command a reader types, without the README's explanation after #.
func withoutComment(cmd string) string {
	if i := strings.Index(cmd, "  #"); i >= 0 {
		cmd = cmd[:i]
	}
	return strings.TrimSpace(cmd)
}

// promises are what the README says a command shows (its comment, or the text around it), keyed
// by the command without its comment. A command not listed here must exit 0.
var promises = map[string]func(out string) error{
	"kubectl get nodes":                                     shows(" Ready "), // "your node, Ready"
	"kubectl get pods -o wide":                              shows("crasher"),
	"kubectl exec deploy/web -- env":                        shows("KUBERNETES_SERVICE_HOST="),
	"kubectl logs crasher --previous":                       shows("about to fail"), // "what the last run wrote"
	"kubectl top pod hog; kubectl top node":                 shows("hog"),
	"kubelet_api '/stats/summary?only_cpu_and_memory=true'": workingSetAtLeast("hog", 200<<20), // "hog's working set ≥ 200Mi"
	"crictl ps -a":                                          shows("crasher"),                  // "the same pods, seen through CRI"
	"minikubelet journal --pod default/crasher":             shows("crasher"),
}

func shows(want string) func(string) error {
	return func(out string) error {
		if !strings.Contains(out, want) {
			return fmt.Errorf("it does not show %q", want)
		}
		return nil
	}
}

// workingSetAtLeast: the kubelet's /stats/summary shows pod's memory working set ≥ min bytes.
func workingSetAtLeast(pod string, min uint64) func(string) error {
	return func(out string) error {
		var summary struct {
			Pods []struct {
				PodRef struct{ Name string } `json:"podRef"`
				Memory *struct {
					WorkingSetBytes *uint64 `json:"workingSetBytes"`
				} `json:"memory"`
			} `json:"pods"`
		}
		if err := json.Unmarshal([]byte(out), &summary); err != nil {
			return fmt.Errorf("not a summary: %v", err)
		}
		for _, p := range summary.Pods {
			if p.PodRef.Name == pod && p.Memory != nil && p.Memory.WorkingSetBytes != nil {
				if ws := *p.Memory.WorkingSetBytes; ws < min {
					return fmt.Errorf("pod %s's working set is %d bytes, want at least %d", pod, ws, min)
				}
				return nil
			}
		}
		return fmt.Errorf("no memory figures for pod %s", pod)
	}
}

// keystroke: once the terminal shows after, type keys.
type keystroke struct{ after, keys string }

// typed is what a reader types into an interactive command, as its comment says; the harness
// takes "(or Ctrl-D)", so the command ends with status 0.
var typed = map[string][]keystroke{
	"kubectl exec -it deploy/web -- sh": {{"/ # ", "echo hi\r"}, {"\r\nhi\r\n/ # ", "\x04"}}, // "type echo hi, then … Ctrl-D"
}

func interactive(cmd string) bool {
	return slices.ContainsFunc(strings.Fields(cmd), func(f string) bool { return f == "-it" || f == "-ti" || f == "--tty" })
}

// TestReadmeMarksTheTour checks the marks without a cluster: every command the tests promise
// something of, or type into, is still in the README, and every interactive command has keys.
func TestReadmeMarksTheTour(t *testing.T) {
	known := map[string]bool{}
	for _, b := range readmeBlocks(t) {
		for _, cmd := range b.commands {
			known[withoutComment(cmd.text)] = true
			if interactive(cmd.text) && typed[withoutComment(cmd.text)] == nil {
				t.Errorf("README.md:%d: %q is interactive: say in typed what a reader types into it", cmd.line, cmd.text)
			}
		}
	}
	for cmd := range promises {
		if !known[cmd] {
			t.Errorf("promises names %q, which no marked block of the README has any more", cmd)
		}
	}
	for cmd := range typed {
		if !known[cmd] {
			t.Errorf("typed names %q, which no marked block of the README has any more", cmd)
		}
	}
}

func TestTourBlocksRefusesBadMarks(t *testing.T) {
	for name, readme := range map[string]string{
		"no marks":           "# x\n```sh\nmake run\n```\n",
		"a mark on no block": "<!-- tour: terminal 2 -->\n\ntext\n",
		"an unknown mark":    "<!-- tour: terminal 3 -->\n```sh\nls\n```\n",
		"an empty block":     "<!-- tour: terminal 2 -->\n```sh\n# nothing\n```\n",
	} {
		if _, err := tourBlocks(readme); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	got, err := tourBlocks("<!-- tour: after Ctrl-C -->\n```sh\n# c\nls -l \\\n   /  # root\n\necho hi\n```\n")
	if err != nil || len(got) != 1 || got[0].when != afterStop || !slices.Equal(got[0].commands, []command{{"ls -l /  # root", 4}, {"echo hi", 7}}) {
		t.Errorf("tourBlocks = %+v, %v", got, err)
	}
}
