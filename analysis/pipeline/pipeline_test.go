package pipeline

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/internal/memory"
	"github.com/heapledger/heapledger/analysis/leaks"
	"github.com/heapledger/heapledger/analysis/progress"
	"github.com/heapledger/heapledger/fixtures/heapdumps"
)

// analyze runs Analyze on path with the default options and returns the report as JSON.
func analyze(t *testing.T, path string, opt Options) string {
	t.Helper()
	if opt.Threshold == 0 {
		opt.Threshold, opt.Top = leaks.DefaultOptions.Threshold, leaks.DefaultOptions.Top
	}
	rep, err := Analyze(context.Background(), path, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Building the graph asks for the analysis's first arrays to be made ahead, with the room the
// file's size leaves; given all the room there is (the fixture is smaller than the program
// itself), the analysis takes them and reports the same.
func TestMakesArraysAhead(t *testing.T) {
	dump := heapdumps.Dump(t)
	plain := analyze(t, dump, Options{})
	defer func(m func(*memory.Budget, int, int64) *leaks.Ahead) { makeAhead = m }(makeAhead)
	var asked []int
	var made *leaks.Ahead
	makeAhead = func(mem *memory.Budget, nodes int, room int64) *leaks.Ahead {
		asked = append(asked, nodes)
		made = leaks.MakeAhead(mem, nodes, 1<<40)
		return made
	}
	out := analyze(t, dump, Options{})
	var v Report
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] <= v.Objects {
		t.Fatalf("arrays asked for %v nodes, want once for more than the %d objects (the super root too)", asked, v.Objects)
	}
	if made == nil && runtime.GOMAXPROCS(0) >= 2 {
		t.Fatal("no arrays made with all the room there is")
	}
	if out != plain {
		t.Error("the arrays made ahead changed the report")
	}
}

// The analysis gives the dump's page cache as the graph is built, and stops giving at its end;
// not with KeepPageCache. The report is the same either way.
func TestGivesPageCache(t *testing.T) {
	dump := heapdumps.Dump(t)
	defer func(g func(*memory.Budget, string) (func(), error)) { giveCache = g }(giveCache)
	var given []string
	stopped := 0
	giveCache = func(b *memory.Budget, path string) (func(), error) {
		given = append(given, path)
		stop, err := b.GiveCache(path)
		if err != nil {
			return nil, err
		}
		return func() { stopped++; stop() }, nil
	}
	kept := analyze(t, dump, Options{KeepPageCache: true})
	if len(given) != 0 {
		t.Fatalf("KeepPageCache gave the page cache of %v", given)
	}
	out := analyze(t, dump, Options{})
	if len(given) != 1 || given[0] != dump || stopped != 1 {
		t.Fatalf("page cache given for %v and stopped %d times, want once for %s, stopped once", given, stopped, dump)
	}
	if out != kept {
		t.Error("giving the page cache changed the report")
	}
}

// The columns go to the directory asked for: where it cannot take them, they stay in memory, the
// report is the same, and the warning names the directory.
func TestTempDir(t *testing.T) {
	dump := heapdumps.Dump(t)
	plain := analyze(t, dump, Options{})
	if got := analyze(t, dump, Options{TempDir: t.TempDir()}); got != plain {
		t.Error("the report changed with the columns in another directory")
	}
	missing := filepath.Join(t.TempDir(), "missing")
	var warned warnings
	if got := analyze(t, dump, Options{TempDir: missing, Listener: &warned}); got != plain {
		t.Error("the report changed when the columns stayed in memory")
	}
	if !slices.ContainsFunc(warned, func(w string) bool {
		return strings.Contains(w, "stayed in memory") && strings.Contains(w, missing)
	}) {
		t.Errorf("warnings %q, want one that the columns stayed in memory, naming %s", warned, missing)
	}
}

// warnings keeps the warnings a Listener is told.
type warnings []string

func (w *warnings) Begin(progress.Step)    {}
func (w *warnings) Read(done, total int64) {}
func (w *warnings) Warn(msg string)        { *w = append(*w, msg) }

// TestPhasesAreTheLeakSteps: the pipeline's table names the leak analysis's steps where it runs
// them, in their order, between the graph and the report.
func TestPhasesAreTheLeakSteps(t *testing.T) {
	var names []string
	for _, p := range phases {
		names = append(names, p.name)
	}
	var steps []string
	for _, s := range (&leaks.Analysis{}).Steps() {
		steps = append(steps, s.Name)
	}
	want := append(append([]string{"read", "index", "graph"}, steps...), "report")
	if !slices.Equal(names, want) {
		t.Errorf("phases %q, want %q", names, want)
	}
}
