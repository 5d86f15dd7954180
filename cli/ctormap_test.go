package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
)

// TestCtorMapAppendixAB writes the constructor map of the jasmin fixtures for Appendix A
// (Figure 1's chain, new Object() passed to this()) and Appendix B (a constructor that invokes
// different constructors on different paths), through the CLI.
func TestCtorMapAppendixAB(t *testing.T) {
	jasmin := testenv.Tool(t, "jasmin") // Debian jasmin-sable
	dir := t.TempDir()
	classes := filepath.Join(dir, "classes")
	srcs, _ := filepath.Glob("../rewrite/ctormap/testdata/*.j")
	if out, err := exec.Command(jasmin, append([]string{"-d", classes}, srcs...)...).CombinedOutput(); err != nil {
		t.Fatalf("jasmin: %v\n%s", err, out)
	}
	cmap := filepath.Join(dir, "ctors.txt")
	_, stderr, err := runCLI(t, "rewrite", "--pass", "identity", "--ctor-map", cmap, classes, "-o", filepath.Join(dir, "out"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	b, err := os.ReadFile(cmap)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		"CtorChain.<init>()V -> CtorChain.<init>(Ljava/lang/Object;)V alternate",
		"CtorChain.<init>(Ljava/lang/Object;)V -> java/lang/Object.<init>()V superclass",
		"DifferentConstructors.<init>(Z)V -> DifferentConstructors.<init>()V alternate",
		"DifferentConstructors.<init>(Z)V -> java/lang/Object.<init>()V superclass",
		"# warning: ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("constructor map lacks %q:\n%s", want, got)
		}
	}
	// The Figure 1 constructor's `new Object()` argument is initialised by a constructor call
	// too, but it is not CtorChain's own: it must not appear as a target.
	if strings.Contains(got, "CtorChain.<init>()V -> java/lang/Object") {
		t.Errorf("the argument's constructor was taken for the super() call:\n%s", got)
	}
	if strings.Count(got, "# warning:") != 1 || !strings.Contains(stderr, "warning: constructor map:") {
		t.Errorf("exactly DifferentConstructors.<init>(Z)V should be warned about:\n%s\nstderr:\n%s", got, stderr)
	}
}
