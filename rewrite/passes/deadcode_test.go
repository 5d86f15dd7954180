package passes

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/internal/testjars"
	"github.com/heapledger/heapledger/rewrite/accounts"
)

// TestDeadCodeOfASMCompilers: code written by ASM with COMPUTE_FRAMES, as Clojure, JRuby and
// Groovy write it, turns unreachable blocks into "nop ... athrow" under a frame with no locals.
// With accounts switching, the count pass kept such methods whole as they were ("load of local
// N: expected object, found top": the catch-all handler covered the dead code, issue 37); they
// must be rewritten, link, run, and count what the live code allocates.
func TestDeadCodeOfASMCompilers(t *testing.T) {
	javac, java := testenv.Tool(t, "javac"), testenv.Tool(t, "java")
	asm := testjars.Path(t, "asm.jar")
	gen, classes := t.TempDir(), t.TempDir()
	if out, err := exec.Command(javac, "-cp", asm, "-d", gen, filepath.Join("testdata", "asmgen", "DeadTail.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	if out, err := exec.Command(java, "-cp", gen+string(os.PathListSeparator)+asm, "DeadTail", classes).CombinedOutput(); err != nil {
		t.Fatalf("generating with ASM: %v\n%s", err, out)
	}
	set, err := accounts.Parse("dead.*")
	if err != nil {
		t.Fatal(err)
	}
	table := accounts.NewTable(nil)
	pass, err := Count(CountOptions{Accounts: set, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rw := rewriteDir(t, pass, classes, out)
	for name, res := range rw.results {
		if len(res.Skipped) > 0 {
			t.Errorf("%s: methods skipped: %v", name, res.Skipped)
		}
		if res.Data == nil {
			t.Errorf("%s: not rewritten", name)
		}
	}
	if got := table.Sites(); got != 3 { // the IllegalArgumentException, the Object[], the Objects
		t.Errorf("%d sites in the table, want the 3 of the live code", got)
	}
	rt, err := filepath.Abs(filepath.Join(fixtures.Dir(), "..", "build", "heapledger-runtime.jar"))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Tool(t, rt) // built by `make build`
	verifyAll(t, java, out, []string{rt})
	b, err := exec.Command(java, "-Xverify:all", "-Dheapledger.snapshot.dir="+t.TempDir(), "-cp", out+string(os.PathListSeparator)+rt, "dead.Tail").CombinedOutput()
	if err != nil || strings.TrimSpace(string(b)) != "7" {
		t.Errorf("rewritten dead.Tail: %v\n%s", err, b)
	}
}
