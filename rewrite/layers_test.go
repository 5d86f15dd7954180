// Package rewrite_test checks the direction of the project's dependencies: cli → analysis →
// rewrite, never back. The bytecode engine and its passes must build without the analyses of
// heap dumps and snapshots, and the agent's rewriter links none of them.
package rewrite_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/heapledger/heapledger/"

// TestRewriteImportsNoAnalysis lists, with `go list -deps`, what every package under rewrite/
// (tests included) depends on, and fails on any package of analysis/ or cli/ among them.
func TestRewriteImportsNoAnalysis(t *testing.T) {
	out, err := exec.Command("go", "list", "-test", "-f", `{{.ImportPath}}: {{join .Deps " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ": ")
		pkgs++
		for _, d := range strings.Fields(deps) {
			if strings.HasPrefix(d, module+"analysis/") || strings.HasPrefix(d, module+"cli") {
				t.Errorf("%s depends on %s: rewrite/ must not import analysis/ or cli/", pkg, d)
			}
		}
	}
	if pkgs < 10 {
		t.Fatalf("go list saw %d packages under rewrite/; the check would prove nothing", pkgs)
	}
}
