package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxFuncLines bounds the body of a function of the command: flags,
// config and wiring stay short, and what grows longer is logic that
// belongs in a library package.
const maxFuncLines = 60

// TestCommandFunctionsStayShort holds every function and function literal
// of the command's non-test files under maxFuncLines lines of body.
func TestCommandFunctionsStayShort(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			what := "a function literal"
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body, what = fn.Body, fn.Name.Name
			case *ast.FuncLit:
				body = fn.Body
			}
			if body != nil {
				lines := fset.Position(body.Rbrace).Line - fset.Position(body.Lbrace).Line - 1
				assert.Less(t, lines, maxFuncLines, "%s: %s has %d lines", fset.Position(body.Lbrace), what, lines)
			}
			return true
		})
	}
}
