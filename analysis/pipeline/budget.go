package pipeline

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// The memory budget (Options.MaxMemory) is planned in four steps:
//  1. DefaultBudget derives a budget from what the process may use, when none is given;
//  2. before the file is read, checkBudget refuses a budget below the smallest one the dump can
//     be analysed in (MinimumBudget), its objects estimated from the file's size; after pass 1 it
//     checks again with the objects counted, before the long work;
//  3. startBudget pages the analysis's big arrays (memory.Budget.Page) when the budget is below
//     what the analysis takes with all of them in memory of their own (unboundedNeed), in large
//     pages where a cgroup's limit holds the budget (pagesFor), and gives Go's own heap its
//     share of the budget (debug.SetMemoryLimit);
//  4. the phases that may run work on both cores at once, holding more memory, are told the
//     budget as their limit (leaks.Options.MemoryLimit), so that they do so only within it.
//
// What stays in anonymous memory, which no file backs: the program, Go's runtime and the read
// buffers (budgetFixed), and the structures that grow with the dump but are not arrays of a
// column (the classes, their names and layouts, the roots, the stacks of the searches, the big
// objects' sizes: budgetPerObject per object, docs/heapdump-benchmarks.md has the measurements).
// Everything else, the columns over the objects and the edges, is paged: their pages take the
// rest of the budget, and the smaller that rest, the more often a page is read back from disk.

// budgetFixed is the part of the smallest budget that does not grow with the dump: the program
// and Go's runtime, the buffers of the passes over the file, and the least room the pages of the
// arrays a phase reads at once need not to be read back for every element.
const budgetFixed = 48 << 20

// budgetPerObject is the part of the smallest budget per object of the dump: the anonymous
// structures that grow with it.
const budgetPerObject = 2

// typicalObjectBytes is what an object takes in a dump file, for the estimate of its objects
// before it is read: the benchmark's dumps hold an object per 45 to 48 bytes. A dump of
// smaller objects is checked again once its objects are counted.
const typicalObjectBytes = 45

// defaultShare is the share of the memory the process may use that the default budget takes:
// the rest is for the page cache of the file being read and the system's own needs.
const defaultShare = 0.9

// MinimumBudget returns the smallest memory budget a dump of so many objects can be analysed in.
func MinimumBudget(objects int64) int64 { return budgetFixed + budgetPerObject*objects }

// DefaultBudget returns the budget an analysis takes when none is given (step 1): a share of
// the memory the process may use (its cgroup's limit, or the memory available), and a sentence
// saying so; 0 and "" when that cannot be told.
func DefaultBudget() (int64, string) {
	n, from := memory.Available()
	if n <= 0 {
		return 0, ""
	}
	b := int64(float64(n) * defaultShare)
	return b, fmt.Sprintf("%d%% of %s, %d MB", int(100*defaultShare), from, n>>20)
}

// ErrBudget is wrapped by the error of an analysis refused for too small a budget.
var ErrBudget = errors.New("memory budget too small")

// checkBudget refuses a budget below MinimumBudget for a dump of objects objects (step 2);
// estimated says the objects are estimated from the file's size.
func checkBudget(budget, objects int64, estimated bool) error {
	need := MinimumBudget(objects)
	if budget <= 0 || budget >= need {
		return nil
	}
	what := fmt.Sprintf("its %d objects", objects)
	if estimated {
		what = fmt.Sprintf("the about %d objects its size holds", objects)
	}
	return fmt.Errorf("%w: %s given, and the dump needs at least %d MB (%d MB for the program and %d bytes for each of %s); give that much or more",
		ErrBudget, sizeText(budget), (need+1<<20-1)>>20, budgetFixed>>20, budgetPerObject, what)
}

// sizeText writes a size in whole MB, or in bytes when under one.
func sizeText(b int64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%d bytes", b)
	}
	return fmt.Sprintf("%d MB", b>>20)
}

// checkFormat refuses a file that does not start as a heap dump (HPROF, or gzip-compressed
// HPROF), with the reader's error; a file it cannot open is left to the loader to report.
func checkFormat(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := hprof.NewReader(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// unboundedNeed is what an analysis of the file at path, of size bytes, takes with every array
// in memory of its own: it peaks under the dump's size (docs/heapdump-benchmarks.md), or for a
// gzip-compressed dump the size it inflates to, taken as gzipInflates times the file's.
func unboundedNeed(path string, size int64) int64 {
	if isGzip(path) {
		return size * gzipInflates
	}
	return size
}

// gzipInflates is how many times its size a gzip-compressed dump is taken to inflate to.
const gzipInflates = 5

func isGzip(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return hprof.IsGzip(f)
}

// startBudget pages mem's arrays when budget is below need, and gives Go's heap its share of the
// budget (step 3). The returned function undoes the latter.
func startBudget(mem *memory.Budget, budget, need int64) (undo func()) {
	if budget <= 0 {
		return func() {}
	}
	// Past its limit the collector runs more often rather than the heap growing. Unpaged, every
	// array is on Go's heap, and the whole budget is its; paged, Go's heap holds the anonymous
	// structures, and the arrays' pages, outside it, take the other half.
	limit := budget
	if budget < need {
		cgroup, ok := memory.CgroupLimit()
		mem.Page(pagesFor(budget, cgroup, ok))
		limit = max(budget/2, budgetFixed)
	}
	prev := debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(prev) }
}

// pagesFor says what pages the paged arrays of a budget take: large ones where the kernel holds
// the budget, that is where the process's cgroup has a limit (cgroup, when limited) and the
// budget is not below its default share of it; the pager then only tidies. A budget below that
// is the pager's to hold, which base pages let it do (memory.Pages).
func pagesFor(budget, cgroup int64, limited bool) memory.Pages {
	if limited && budget >= int64(float64(cgroup)*defaultShare) {
		return memory.LargePages
	}
	return memory.BasePages
}
