package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mutatorTokens gives, for each mutator the lists use, the operators
// gremlins v0.6.0 applies it to (its TokenMutantType). It applies
// INVERT_NEGATIVES and ARITHMETIC_BASE alike to every '-', unary or binary.
var mutatorTokens = map[string][]token.Token{
	"CONDITIONALS_BOUNDARY": {token.LSS, token.GTR, token.LEQ, token.GEQ},
	"CONDITIONALS_NEGATION": {token.EQL, token.NEQ, token.LSS, token.GTR, token.LEQ, token.GEQ},
	"ARITHMETIC_BASE":       {token.ADD, token.SUB, token.MUL, token.QUO, token.REM},
	"INVERT_NEGATIVES":      {token.SUB},
	"INCREMENT_DECREMENT":   {token.INC, token.DEC},
}

// checkEntry reports whether mutator applies at line:col of the Go source
// src, as gremlins sees it: the position must hold the operator of a unary
// or binary expression or of an ++/-- statement, of a kind the mutator
// changes.
func checkEntry(src []byte, line, col int, mutator string) error {
	kinds, ok := mutatorTokens[mutator]
	if !ok {
		return fmt.Errorf("unknown mutator %s", mutator)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	op := token.ILLEGAL
	ast.Inspect(f, func(n ast.Node) bool {
		var tok token.Token
		var pos token.Pos
		switch n := n.(type) {
		case *ast.UnaryExpr:
			tok, pos = n.Op, n.OpPos
		case *ast.BinaryExpr:
			tok, pos = n.Op, n.OpPos
		case *ast.IncDecStmt:
			tok, pos = n.Tok, n.TokPos
		default:
			return true
		}
		if p := fset.Position(pos); p.Line == line && p.Column == col {
			op = tok
		}
		return true
	})
	switch {
	case slices.Contains(kinds, op):
		return nil
	case op != token.ILLEGAL:
		return fmt.Errorf("%s does not apply to the operator %s there", mutator, op)
	}
	return fmt.Errorf("no operator there: %s", tokenAt(src, line, col))
}

// tokenAt describes the token that starts at line:col of src, or says that
// none does and what the line holds.
func tokenAt(src []byte, line, col int) string {
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if p := fset.Position(pos); p.Line == line && p.Column == col {
			if lit == "" {
				lit = tok.String()
			}
			return fmt.Sprintf("the token is %s %q", tok, lit)
		}
	}
	lines := strings.Split(string(src), "\n")
	if line < 1 || line > len(lines) {
		return fmt.Sprintf("the file has %d lines", len(lines))
	}
	return fmt.Sprintf("no token starts at column %d of %q", col, lines[line-1])
}

// checkEntry accepts an operator its mutator applies to, at its exact line
// and column, and refuses a wrong column, a wrong line, a mutator of another
// kind, a '*' that is a pointer type and an unknown mutator.
func TestCheckEntry(t *testing.T) {
	src := []byte("package p\n\nfunc f(a, b int, q *int) int {\n\tif a < b {\n\t\ta++\n\t}\n\treturn -a * (b - 1)\n}\n")
	for _, tc := range []struct {
		name, mutator string
		line, col     int
		err           string
	}{
		{name: "boundary", mutator: "CONDITIONALS_BOUNDARY", line: 4, col: 7},
		{name: "negation", mutator: "CONDITIONALS_NEGATION", line: 4, col: 7},
		{name: "increment", mutator: "INCREMENT_DECREMENT", line: 5, col: 4},
		{name: "unary minus", mutator: "INVERT_NEGATIVES", line: 7, col: 9},
		{name: "unary minus, arithmetic", mutator: "ARITHMETIC_BASE", line: 7, col: 9},
		{name: "binary minus, invert", mutator: "INVERT_NEGATIVES", line: 7, col: 17},
		{name: "times", mutator: "ARITHMETIC_BASE", line: 7, col: 12},
		{name: "wrong column", mutator: "CONDITIONALS_BOUNDARY", line: 4, col: 6, err: `no token starts at column 6 of "\tif a < b {"`},
		{name: "wrong column, other token", mutator: "CONDITIONALS_BOUNDARY", line: 4, col: 5, err: `no operator there: the token is IDENT "a"`},
		{name: "wrong line", mutator: "CONDITIONALS_BOUNDARY", line: 5, col: 7, err: "no operator there"},
		{name: "past the end", mutator: "CONDITIONALS_BOUNDARY", line: 40, col: 7, err: "the file has 9 lines"},
		{name: "wrong kind", mutator: "ARITHMETIC_BASE", line: 4, col: 7, err: "ARITHMETIC_BASE does not apply to the operator < there"},
		{name: "not unary minus", mutator: "INVERT_NEGATIVES", line: 7, col: 12, err: "INVERT_NEGATIVES does not apply to the operator * there"},
		{name: "pointer type", mutator: "ARITHMETIC_BASE", line: 3, col: 20, err: `no operator there: the token is * "*"`},
		{name: "unknown mutator", mutator: "INVERT_LOGICAL", line: 4, col: 7, err: "unknown mutator INVERT_LOGICAL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkEntry(src, tc.line, tc.col, tc.mutator)
			if tc.err == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.err)
			}
		})
	}
}

// listEntry is the head of an equivalent-list line: FILE:LINE:COL MUTATOR.
var listEntry = regexp.MustCompile(`^(\S+\.go):(\d+):(\d+) ([A-Z_]+)$`)

// Every entry of every equivalent list names a mutant gremlins can make:
// an operator its mutator applies to, at the line and column given. A list
// goes stale silently when code moves, as only full runs check it.
func TestEquivalentListsPointAtOperators(t *testing.T) {
	lists, err := filepath.Glob(filepath.Join("equivalent", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, lists)
	root := filepath.Join("..", "..")
	seen := map[string]string{}
	for _, list := range lists {
		t.Run(filepath.Base(list), func(t *testing.T) {
			f, err := os.Open(list)
			require.NoError(t, err)
			defer f.Close()
			sc := bufio.NewScanner(f)
			for n := 1; sc.Scan(); n++ {
				line := strings.TrimSpace(sc.Text())
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				where := fmt.Sprintf("%s:%d", list, n)
				head, reason, _ := strings.Cut(line, "#")
				head = strings.TrimSpace(head)
				if !assert.NotEmpty(t, strings.TrimSpace(reason), "%s: %q has no reason after '#'", where, line) {
					continue
				}
				m := listEntry.FindStringSubmatch(head)
				if !assert.NotNil(t, m, "%s: want \"FILE:LINE:COL MUTATOR # reason\", have %q", where, line) {
					continue
				}
				if prev, dup := seen[head]; dup {
					assert.Fail(t, "duplicate entry", "%s: %s is listed already at %s", where, head, prev)
					continue
				}
				seen[head] = where
				src, err := os.ReadFile(filepath.Join(root, m[1]))
				if !assert.NoError(t, err, "%s: %s", where, head) {
					continue
				}
				lineNo, _ := strconv.Atoi(m[2])
				col, _ := strconv.Atoi(m[3])
				assert.NoError(t, checkEntry(src, lineNo, col, m[4]), "%s: %s", where, head)
			}
			require.NoError(t, sc.Err())
		})
	}
}
