package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command: it returns the process's exit code (0 ok, 1 the file has problems,
// 2 a usage error).
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: configcheck vm [flags] vm.yaml | configcheck kind kind-config.yaml")
		return 2
	}
	switch args[0] {
	case "vm":
		return runVM(args[1:], stdout, stderr)
	case "kind":
		return runKind(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "configcheck: unknown command %q (want vm or kind)\n", args[0])
		return 2
	}
}

func runVM(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("configcheck vm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var want pins
	fs.StringVar(&want.Go, "go-version", "", "the Go version vm.yaml must pin (from .go-version)")
	fs.StringVar(&want.Kind, "kind-version", "", "the kind version vm.yaml must pin (from hack/tools/go.mod)")
	fs.StringVar(&want.Kubectl, "kubectl-version", "", "the kubectl version vm.yaml must pin (the cluster's)")
	fs.StringVar(&want.Delve, "delve-version", "", "the Delve version vm.yaml must pin (from hack/tools/go.mod)")
	scriptsDir := fs.String("scripts-dir", "", "write the provision and probe scripts into this directory")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: configcheck vm [flags] vm.yaml")
		return 2
	}
	path := fs.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "configcheck: %v\n", err)
		return 1
	}
	res, errs := checkVM(data, want)
	if len(errs) > 0 {
		for _, err := range errs {
			fmt.Fprintf(stderr, "%s: %v\n", path, err)
		}
		return 1
	}
	if *scriptsDir != "" {
		if err := writeScripts(*scriptsDir, res.scripts); err != nil {
			fmt.Fprintf(stderr, "configcheck: write scripts: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stdout, "%s: ok: %s\n", path, res.summary)
	return 0
}

func runKind(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: configcheck kind kind-config.yaml")
		return 2
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "configcheck: %v\n", err)
		return 1
	}
	summary, err := checkKindConfig(data)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", args[0], err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok: %s\n", args[0], summary)
	return 0
}

// writeScripts writes each script as dir/<name>, executable, for shellcheck.
func writeScripts(dir string, scripts []namedScript) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range scripts {
		if err := os.WriteFile(filepath.Join(dir, s.name), []byte(s.text), 0o755); err != nil {
			return err
		}
	}
	return nil
}
