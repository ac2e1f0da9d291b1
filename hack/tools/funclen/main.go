// Command funclen fails when a function in the repo's Go code is longer than -max lines (80 by
// default), counted from its `func` line to its closing brace, both included. It is run by
// hack/verify-funclen.sh (part of `make verify`) over pkg, cmd, test, labs and hack.
//
//	funclen [-max 80] DIR...
//
// It walks each DIR and reads every .go file except tests (_test.go), testdata and vendor
// directories, and generated files (a "// Code generated ... DO NOT EDIT." line, as go/ast
// defines it). It prints each long function as "path:line: name is N lines (max M)", longest
// first, and exits 1 if there is one. A long function is split by step, the way upstream's
// computePodActions reads: a small named function per step, each one a unit a student can step
// over in Delve.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command: it returns the exit code (0 none too long, 1 some, 2 a usage or
// read error).
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("funclen", flag.ContinueOnError)
	flags.SetOutput(stderr)
	maxLines := flags.Int("max", 80, "the longest a function may be, in lines")
	if err := flags.Parse(args); err != nil || flags.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: funclen [-max 80] DIR...")
		return 2
	}
	var all []function
	for _, dir := range flags.Args() {
		fns, err := functionsIn(dir)
		if err != nil {
			fmt.Fprintf(stderr, "funclen: %v\n", err)
			return 2
		}
		all = append(all, fns...)
	}
	long := tooLong(all, *maxLines)
	for _, f := range long {
		fmt.Fprintf(stdout, "%s:%d: %s is %d lines (max %d)\n", f.file, f.line, f.name, f.lines, *maxLines)
	}
	if len(long) > 0 {
		return 1
	}
	fmt.Fprintf(stdout, "funclen: %d functions in %s, none over %d lines\n", len(all), strings.Join(flags.Args(), " "), *maxLines)
	return 0
}

// function is one function or method declaration with a body.
type function struct {
	file  string
	line  int    // of the `func` keyword
	name  string // "Name", or "(*T).Name" for a method
	lines int    // from the `func` line to the closing brace, both included
}

// tooLong returns the functions longer than maxLines, longest first (then by file and line).
func tooLong(fns []function, maxLines int) []function {
	var long []function
	for _, f := range fns {
		if f.lines > maxLines {
			long = append(long, f)
		}
	}
	sort.SliceStable(long, func(i, j int) bool {
		if long[i].lines != long[j].lines {
			return long[i].lines > long[j].lines
		}
		if long[i].file != long[j].file {
			return long[i].file < long[j].file
		}
		return long[i].line < long[j].line
	})
	return long
}

// functionsIn walks dir and returns the functions of its non-test, non-generated Go files.
func functionsIn(dir string) ([]function, error) {
	var fns []function
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if !ast.IsGenerated(file) {
			fns = append(fns, functionsOf(fset, path, file)...)
		}
		return nil
	})
	return fns, err
}

// skipDir says whether a directory holds no code of ours to measure.
func skipDir(name string) bool {
	return name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// functionsOf lists the top-level functions and methods of one parsed file. A function literal
// counts as part of the function that holds it.
func functionsOf(fset *token.FileSet, path string, file *ast.File) []function {
	var fns []function
	for _, decl := range file.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Type.Func), fset.Position(fd.Body.Rbrace)
		fns = append(fns, function{file: path, line: start.Line, name: funcName(fd), lines: end.Line - start.Line + 1})
	}
	return fns
}

// funcName is "Name" for a function and "(T).Name" or "(*T).Name" for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	return fmt.Sprintf("(%s).%s", receiverType(fd.Recv.List[0].Type), fd.Name.Name)
}

// receiverType names a receiver's type without its type parameters: T, *T.
func receiverType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + receiverType(t.X)
	case *ast.IndexExpr: // T[P]
		return receiverType(t.X)
	case *ast.IndexListExpr: // T[P, Q]
		return receiverType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}
