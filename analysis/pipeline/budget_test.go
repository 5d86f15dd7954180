package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
	"github.com/heapledger/heapledger/analysis/internal/memory"
	"github.com/heapledger/heapledger/analysis/progress"
	"github.com/heapledger/heapledger/fixtures/heapdumps"
)

// generatedObjects is how many objects generatedDump writes besides the classes of
// hproftest.RandomHeap, which are objects too (generatedCount in all).
const (
	generatedObjects = 120_000
	generatedCount   = generatedObjects + hproftest.RandomHeapClasses
)

// generatedDump writes hproftest.RandomHeap's dump of generatedObjects objects and returns its
// path.
func generatedDump(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "generated.hprof")
	if err := os.WriteFile(path, hproftest.RandomHeap(generatedObjects, 33), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// pageEverything has the analyses that follow page every array of a page or more to files in
// dir, under a budget they are always over, so that the pager trims them all the time; it
// returns how many analyses paged and how often their pagers trimmed, once they are done.
func pageEverything(t *testing.T, dir string) (paged func() (analyses, trims int)) {
	t.Helper()
	var made []*memory.Budget
	prev := newBudget
	t.Cleanup(func() { newBudget = prev })
	newBudget = func(limit int64, _ string) *memory.Budget {
		if limit == 0 {
			return memory.New(0, dir)
		}
		// A dump this small fits any budget the analysis takes: it would page nothing.
		b := memory.New(1, dir)
		b.PageFrom(4096)
		b.Page(memory.BasePages)
		made = append(made, b)
		return b
	}
	return func() (analyses, trims int) {
		for _, b := range made {
			trims += b.Trims()
		}
		return len(made), trims
	}
}

// Under the smallest budget, every array paged and trimmed all the time, the fixture dump and a
// generated larger one give the report of an analysis without a budget, byte for byte, and
// leave no file behind.
func TestBudgetSameReport(t *testing.T) {
	dumps := map[string]string{"generated": generatedDump(t), "fixture": heapdumps.Dump(t)}
	dir := t.TempDir()
	paged := pageEverything(t, dir)
	for name, dump := range dumps {
		t.Run(name, func(t *testing.T) {
			plain := analyze(t, dump, Options{})
			st, err := os.Stat(dump)
			if err != nil {
				t.Fatal(err)
			}
			// Not an object for every byte: a budget above the smallest (the budget the pager keeps
			// to is pageEverything's).
			budget := MinimumBudget(st.Size())
			before, trimmed := paged()
			if got := analyze(t, dump, Options{MaxMemory: budget}); got != plain {
				t.Errorf("the report under a budget of %d MB differs from the one without", budget>>20)
			}
			if n, trims := paged(); n != before+1 || trims == trimmed {
				t.Errorf("the analysis under a budget paged %d times and trimmed %d times, want once and some", n-before, trims-trimmed)
			}
		})
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left in the temporary directory", len(left))
	}
}

// steps keeps the names of the steps begun.
type steps []string

func (s *steps) Begin(st progress.Step) { *s = append(*s, st.Name) }
func (s *steps) Read(done, total int64) {}
func (s *steps) Warn(msg string)        {}

// Too small a budget is refused before the file is read when the file's size tells, and once
// the objects are counted otherwise, before any other step; the error names the smallest budget.
func TestBudgetRefusedAtOnce(t *testing.T) {
	dump := generatedDump(t)
	st, err := os.Stat(dump)
	if err != nil {
		t.Fatal(err)
	}
	estimated := st.Size() / typicalObjectBytes
	if estimated >= generatedCount {
		t.Fatalf("the generated dump's %d bytes hold more than %d objects by the estimate: its objects must be smaller for this test", st.Size(), generatedCount)
	}
	for _, c := range []struct {
		budget int64
		need   int64
		steps  string
	}{
		{budget: MinimumBudget(estimated) - 1, need: MinimumBudget(estimated), steps: ""},
		{budget: MinimumBudget(estimated), need: MinimumBudget(generatedCount), steps: "reading objects"},
	} {
		var begun steps
		_, err := Analyze(context.Background(), dump, Options{MaxMemory: c.budget, Threshold: 0.1, Listener: &begun})
		want := fmt.Sprintf("needs at least %d MB", (c.need+1<<20-1)>>20)
		if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), want) {
			t.Errorf("budget %d: error %v, want ErrBudget saying %q", c.budget, err, want)
		}
		if got := strings.Join(begun, ", "); got != c.steps {
			t.Errorf("budget %d: steps begun %q, want %q", c.budget, got, c.steps)
		}
	}
	if _, err := Analyze(context.Background(), dump, Options{MaxMemory: MinimumBudget(generatedCount), Threshold: 0.1}); err != nil {
		t.Errorf("the smallest budget named: %v", err)
	}
}

// A budget under a megabyte is said in bytes, not as "0 MB"; a file that is no heap dump is
// refused as such, not for its budget.
func TestBudgetRefusalWording(t *testing.T) {
	dump := generatedDump(t)
	_, err := Analyze(context.Background(), dump, Options{MaxMemory: 1000, Threshold: 0.1})
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), ": 1000 bytes given") {
		t.Errorf("1000-byte budget: %v, want ErrBudget saying 1000 bytes given", err)
	}
	notDump := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notDump, bytes.Repeat([]byte("not a heap dump\n"), 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Analyze(context.Background(), notDump, Options{MaxMemory: 1000, Threshold: 0.1})
	if err == nil || errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "not an HPROF file") {
		t.Errorf("a text file under a small budget: %v, want refused as not an HPROF file", err)
	}
}

// A budget pages the arrays only below what the analysis takes with all of them in memory: the
// file's size, or for a gzip-compressed dump the size it is taken to inflate to.
func TestBudgetPagesBelowNeed(t *testing.T) {
	dir := t.TempDir()
	plain, gz := filepath.Join(dir, "plain.hprof"), filepath.Join(dir, "dump.hprof.gz")
	if err := os.WriteFile(plain, []byte("JAVA PROFILE 1.0.2\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gz, []byte{0x1f, 0x8b, 8, 0}, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := unboundedNeed(plain, 1000); got != 1000 {
		t.Errorf("plain dump of 1000 bytes needs %d, want 1000", got)
	}
	if got := unboundedNeed(gz, 1000); got != 1000*gzipInflates {
		t.Errorf("gzip dump of 1000 bytes needs %d, want %d", got, 1000*gzipInflates)
	}
	for _, c := range []struct {
		budget, need int64
		pages        bool
	}{{0, 1 << 30, false}, {1 << 30, 1 << 29, false}, {1 << 29, 1 << 30, true}} {
		mem := memory.New(c.budget, dir)
		startBudget(mem, c.budget, c.need)()
		if mem.Paging() != c.pages {
			t.Errorf("budget %d, need %d: paging %v, want %v", c.budget, c.need, mem.Paging(), c.pages)
		}
		mem.Close()
	}
	if runtime.GOOS == "linux" {
		if n, from := DefaultBudget(); n <= 0 || !strings.Contains(from, "%") {
			t.Errorf("DefaultBudget() = %d, %q: want a share of the memory the process may use", n, from)
		}
	}
}

// Large pages only where a cgroup's limit holds the budget: the default share of it or more.
func TestPagesFor(t *testing.T) {
	const mb = 1 << 20
	limit := int64(512 * mb)
	share := int64(float64(limit) * defaultShare) // what DefaultBudget gives under 512 MB
	for _, c := range []struct {
		budget, cgroup int64
		limited        bool
		want           memory.Pages
	}{
		{share, 512 * mb, true, memory.LargePages},    // the default budget under a cgroup
		{600 * mb, 512 * mb, true, memory.LargePages}, // over the limit: the kernel holds it at the limit
		{200 * mb, 512 * mb, true, memory.BasePages},  // --max-memory below the cgroup's: the pager's
		{460 * mb, 0, false, memory.BasePages},        // no cgroup limit: the pager's
		{share - 1, 512 * mb, true, memory.BasePages}, // just under the share
	} {
		if got := pagesFor(c.budget, c.cgroup, c.limited); got != c.want {
			t.Errorf("pagesFor(%d MB, cgroup %d MB, %v) = %d, want %d", c.budget/mb, c.cgroup/mb, c.limited, got, c.want)
		}
	}
}
