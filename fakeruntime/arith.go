package fakeruntime

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// evalArith evaluates the expression of "$(( ))": integers, variables (with or without "$"; an
// unset or non-numeric one is 0), parentheses, unary - + !, * / %, + -, < <= > >=, == !=, && ||,
// with C's precedence. Its error reads like sh's.
func evalArith(expr string, lookup func(string) string) (int64, error) {
	a := &arith{lookup: lookup}
	if err := a.tokenize(expr); err != nil {
		return 0, err
	}
	n, err := a.binary(0)
	if err == nil && a.pos < len(a.toks) {
		err = fmt.Errorf("sh: arithmetic syntax error: %q", expr)
	}
	return n, err
}

type arith struct {
	toks   []string
	pos    int
	lookup func(string) string
}

// arithOps are the binary operators by precedence level, lowest first.
var arithOps = [][]string{{"||"}, {"&&"}, {"==", "!="}, {"<", "<=", ">", ">="}, {"+", "-"}, {"*", "/", "%"}}

func (a *arith) tokenize(expr string) error {
	for i := 0; i < len(expr); {
		c := rune(expr[i])
		j := i + 1
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
			continue
		case c == '$' || isNameChar(c):
			for j < len(expr) && isNameChar(rune(expr[j])) {
				j++
			}
		case strings.Contains("<>=!&|", string(c)) && j < len(expr) && strings.Contains("=&|", string(expr[j])):
			j++
		case !strings.ContainsRune("+-*/%()<>!", c):
			return fmt.Errorf("sh: arithmetic syntax error: %q", expr)
		}
		a.toks = append(a.toks, expr[i:j])
		i = j
	}
	return nil
}

func (a *arith) peek() string {
	if a.pos < len(a.toks) {
		return a.toks[a.pos]
	}
	return ""
}

// binary parses operators of precedence level and above.
func (a *arith) binary(level int) (int64, error) {
	if level == len(arithOps) {
		return a.unary()
	}
	x, err := a.binary(level + 1)
	for err == nil {
		op := a.peek()
		found := false
		for _, o := range arithOps[level] {
			found = found || o == op
		}
		if !found {
			break
		}
		a.pos++
		var y int64
		if y, err = a.binary(level + 1); err == nil {
			x, err = applyArith(op, x, y)
		}
	}
	return x, err
}

func applyArith(op string, x, y int64) (int64, error) {
	b := func(v bool) int64 {
		if v {
			return 1
		}
		return 0
	}
	switch op {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/", "%":
		if y == 0 {
			return 0, errors.New("sh: arithmetic: divide by zero")
		}
		if op == "/" {
			return x / y, nil
		}
		return x % y, nil
	case "<":
		return b(x < y), nil
	case "<=":
		return b(x <= y), nil
	case ">":
		return b(x > y), nil
	case ">=":
		return b(x >= y), nil
	case "==":
		return b(x == y), nil
	case "!=":
		return b(x != y), nil
	case "&&":
		return b(x != 0 && y != 0), nil
	}
	return b(x != 0 || y != 0), nil // "||"
}

func (a *arith) unary() (int64, error) {
	tok := a.peek()
	a.pos++
	switch {
	case tok == "":
		return 0, errors.New("sh: arithmetic syntax error: missing operand")
	case tok == "-" || tok == "+" || tok == "!":
		x, err := a.unary()
		switch tok {
		case "-":
			x = -x
		case "!":
			x = map[bool]int64{true: 1}[x == 0]
		}
		return x, err
	case tok == "(":
		x, err := a.binary(0)
		if err == nil && a.peek() != ")" {
			return 0, errors.New("sh: arithmetic syntax error: missing )")
		}
		a.pos++
		return x, err
	case tok[0] >= '0' && tok[0] <= '9':
		n, err := strconv.ParseInt(tok, 0, 64)
		if err != nil {
			return 0, fmt.Errorf("sh: arithmetic syntax error: bad number %q", tok)
		}
		return n, nil
	case tok[0] == '$' || isNameStart(rune(tok[0])):
		n, _ := strconv.ParseInt(strings.TrimSpace(a.lookup(strings.TrimPrefix(tok, "$"))), 10, 64)
		return n, nil
	}
	return 0, fmt.Errorf("sh: arithmetic syntax error: unexpected %q", tok)
}
