// Package pipeline analyses a heap dump from its file to a report with every object named: the
// library entry point behind `heapledger heap analyze`. It runs the phases of the analysis in
// order, owns the memory they work in, and reports their progress to a listener.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/heapledger/heapledger/analysis/heapdump"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/memory"
	"github.com/heapledger/heapledger/analysis/leaks"
	"github.com/heapledger/heapledger/analysis/progress"
	"github.com/heapledger/heapledger/analysis/tracked"
)

// Options say which dump of a file to analyse, and how.
type Options struct {
	// Dump picks the heap dump of a file holding several (1-based); 0 means the last.
	Dump int
	// Compressed overrides the compressed-reference inference: "" or "auto" infers it, "on" or
	// "off" force it (see heapdump.Options).
	Compressed string
	// KeepUnreachable analyses objects no GC root reaches too, attached to the super root by the
	// thesis's rule, instead of only counting them.
	KeepUnreachable bool
	// AllowPartial analyses what a truncated file holds instead of failing.
	AllowPartial bool
	// Threshold is the share of the heap (above 0, at most 1) an object must retain to be a
	// leak suspect; Top is how many objects and classes each ranking lists.
	Threshold float64
	Top       int
	// KeepPageCache leaves the dump's pages in the page cache, where the analysis otherwise
	// takes the memory they hold once it has read the file for the last time.
	KeepPageCache bool
	// Names names the accounts and sites of heapledger's tracking references where the dump's own
	// table does not (nil: none).
	Names *tracked.Names
	// Listener is told of the steps of the analysis as they run (nil: no one).
	Listener progress.Listener
	// TempDir is where the columns a phase does not read wait ("": the system's temporary
	// directory). It saves memory only on a disk: on a tmpfs the files are memory too.
	TempDir string
	// MaxMemory is the memory the analysis may take, in bytes (0: no budget). Below what the
	// analysis takes with every array in memory of its own, the big arrays are paged to files in
	// TempDir (see budget.go); below MinimumBudget it is refused at once, wrapping ErrBudget.
	// The results are the same under any budget.
	MaxMemory int64
}

// Analyze analyses the dump at path and returns its report. It stops with an error wrapping
// progress.ErrCancelled once ctx is done.
//
// It checks the file and the budget (step 1), then runs the phases of the table phases in
// order (step 2): each is a method of run or a step of the leak analysis, and hands its results
// on through run.
func Analyze(ctx context.Context, path string, opt Options) (*Report, error) {
	if opt.Names == nil {
		opt.Names = tracked.NewNames()
	}
	// The big arrays become garbage between phases, where they go back to the system as they
	// are dropped (memory.Release, Scratch.Trim, spilling) or by a collection that the phase
	// after starts with. A lower GOGC does not lower the peak: it only makes the collector run
	// more often on the big arrays each phase allocates, stopping every goroutine to scan its
	// stack each time. A higher one spares the collections Go's pace would start in the middle
	// of a phase, counting arrays given back already as heap until collected. GOGC still
	// overrides (docs/heapdump-benchmarks.md has the measurements).
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	r := &run{path: path, opt: opt, m: progress.New(ctx, opt.Listener), size: -1, stopGiving: func() {}}
	defer func() { r.stopGiving() }()
	// 1. A file that is no heap dump is refused as such, before its size is judged as one.
	if st, err := os.Stat(path); err == nil {
		r.size = st.Size()
	}
	if err := checkFormat(path); err != nil {
		return nil, err
	}
	if err := checkBudget(opt.MaxMemory, r.size/typicalObjectBytes, true); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.mem = newBudget(opt.MaxMemory, opt.TempDir)
	defer r.mem.Close()
	defer startBudget(r.mem, opt.MaxMemory, unboundedNeed(path, r.size))()
	// 2.
	for _, p := range phases {
		if err := p.run(r); err != nil {
			return nil, r.fail(err)
		}
	}
	return r.out, nil
}

// run is one analysis: what its phases hand on to each other.
type run struct {
	path       string
	opt        Options
	m          *progress.Monitor
	mem        *memory.Budget
	size       int64 // the file's, -1 when unknown
	stopGiving func()

	x      *heapdump.Loader
	d      *heapdump.Dump
	in     *leaks.Input
	ledger *ledgerInDump
	leak   *leaks.Analysis // from the graph phase until the report phase finishes it
	out    *Report
}

// phase is one named phase of the analysis.
type phase struct {
	name string
	run  func(*run) error
}

// phases are the analysis from the file to the report, in order. The leak analysis's own steps
// (leaks.Analysis.Steps) run between the graph and the report; TestPhasesAreTheLeakSteps keeps
// them in its order.
var phases = []phase{
	{"read", (*run).read},
	{"index", (*run).index},
	{"graph", (*run).graph},
	{"dominators", leakStep(0)},
	{"retained sizes", leakStep(1)},
	{"suspects", leakStep(2)},
	{"dynamic sizes", leakStep(3)},
	{"report", (*run).report},
}

// leakStep is the phase that runs step i of the leak analysis.
func leakStep(i int) func(*run) error {
	return func(r *run) error {
		if err := r.leak.Steps()[i].Run(); err != nil {
			return fmt.Errorf("%s: %w", r.path, err)
		}
		return nil
	}
}

// fail is what a failed phase returns: its error, and when the leak analysis had begun, the
// columns it holds are returned to the dump all the same.
func (r *run) fail(err error) error {
	if r.leak != nil {
		_, ferr := r.leak.Finish()
		r.leak = nil
		err = errors.Join(err, ferr)
	}
	return err
}

// read reads the dump's records, and checks the budget again with its objects counted.
func (r *run) read() error {
	x, err := heapdump.NewLoader(r.path, heapdump.Options{
		Dump: r.opt.Dump, Compressed: r.opt.Compressed, KeepUnreachable: r.opt.KeepUnreachable,
		AllowPartial: r.opt.AllowPartial, Watch: []heapdump.Watch{tracked.Watch}, Monitor: r.m, Memory: r.mem,
	})
	if err != nil {
		return err
	}
	r.x = x
	if err := x.Read(); err != nil {
		return err
	}
	if err := checkBudget(r.opt.MaxMemory, int64(x.Objects()), false); err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	return nil
}

// index numbers the objects and resolves their references.
func (r *run) index() error {
	if err := r.x.Index(); err != nil {
		return err
	}
	return r.x.References()
}

// graph builds the object graph, finds heapledger's runtime in it, sets aside the columns the
// leak analysis does not read, and starts that analysis.
func (r *run) graph() error {
	// Building the graph runs mostly on one core; the other meanwhile makes the first phase's
	// arrays and faults their pages in, if the memory the file's size allows for leaves room for
	// them (for a gzip dump, the compressed size: all that is known then).
	var ahead *leaks.Ahead
	d := r.x.Build(func(nodes int) {
		// The file has been read for the last time: its page cache is the memory the arrays
		// made from here on take. Giving is an optimisation: a file whose cache cannot be given
		// is analysed all the same.
		if !r.opt.KeepPageCache {
			if stop, err := giveCache(r.mem, r.path); err == nil {
				r.stopGiving = stop
			}
		}
		if res := memory.Resident(); r.size >= 0 && res >= 0 && !r.mem.Paging() {
			ahead = makeAhead(r.mem, nodes, r.size-res)
		}
	})
	r.d = d
	for _, w := range d.Warnings {
		if !strings.HasPrefix(w, r.path) {
			w = r.path + ": " + w
		}
		r.m.Warn(w)
	}
	lopt := leakOptions(r.opt, r.m, r.mem, ahead, r.size, d.Bytes)
	r.in = &leaks.Input{
		Graph: d.Graph, Weak: heapgraph.EdgeSet(d.Weak), ClassOf: d.ClassOf, NumClasses: len(d.Classes),
		ClassObjects: d.ClassObjects(),
	}
	ledger, err := findLedger(d, r.opt.Names, r.in, r.m.Warn, func(name string) { r.m.Begin("graph", name) })
	if err != nil {
		return err
	}
	r.ledger = ledger
	d.Weak, d.ClassOf = nil, nil
	r.m.Begin("graph", "setting columns aside")
	d.Park()
	r.leak = leaks.Start(r.in, lopt)
	return nil
}

// report finishes the leak analysis and names every object of its report.
func (r *run) report() error {
	rep, err := r.leak.Finish()
	r.leak = nil
	r.d.ClassOf = r.in.ClassOf
	if err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	d := r.d
	// The ids come back as views too: nothing needs the memory the analysis leaves behind,
	// which goes back to the system as the caller ends.
	d.Graph.Size, d.Graph.Succ, r.in.Weak, r.in.Graph = nil, nil, nil, nil
	r.m.Begin("report", "naming references")
	if err := d.UnparkViews(); err != nil {
		return err
	}
	if r.out, err = name(d, rep, r.opt.Threshold, r.opt.Top, r.ledger); err != nil {
		return err
	}
	if n, b, why := r.mem.SpillFailures(); n > 0 {
		r.m.Warn(fmt.Sprintf("%d column(s) of the analysis (%d MB) stayed in memory, as their temporary files could not be written (first: %v); the results are the same, the peak memory higher", n, b>>20, why))
	}
	return nil
}

// leakOptions are the options of the leak analysis: opt's, with the monitor m, the budget mem
// and the arrays made ahead, for a file of size bytes (-1: unknown) whose graph takes inflated.
func leakOptions(opt Options, m *progress.Monitor, mem *memory.Budget, ahead *leaks.Ahead, size, inflated int64) leaks.Options {
	lopt := leaks.DefaultOptions
	lopt.Threshold = opt.Threshold
	lopt.Top = opt.Top
	lopt.Monitor = m
	lopt.Ahead = ahead
	lopt.Memory = mem
	// The analysis moves the columns a phase does not read to temporary files meanwhile, and
	// the Dump must not hold them too for that to free any memory.
	lopt.Spill = true
	// Naming the reported objects needs their ids, kinds and classes and the edge offsets,
	// not the edges, the sizes or the weak edges: those stay out when the analysis ends.
	lopt.Leave = leaks.Columns{Sizes: true, Succ: true, Weak: true}
	// Those come back as views of their files, whose pages the few lookups read in, rather
	// than as copies in fresh memory.
	lopt.Views = true
	// The work beside other work keeps under the file's size, or for a gzip-compressed dump the
	// size it inflates to (the graph is the same as the plain file's), or the budget if less.
	if size >= 0 {
		lopt.MemoryLimit = max(size, inflated)
	}
	if opt.MaxMemory > 0 {
		lopt.MemoryLimit = min(max(lopt.MemoryLimit, 1), opt.MaxMemory)
	}
	return lopt
}

// newBudget is memory.New, which tests replace to page every array of a small dump and trim
// them all the time.
var newBudget = memory.New

// giveCache is Budget.GiveCache, which tests replace to see that the analysis gives the dump's
// page cache only once the file is read and unless asked not to.
var giveCache = (*memory.Budget).GiveCache

// makeAhead is leaks.MakeAhead, which tests replace to see that building the graph asks for the
// analysis's arrays, with the room they choose.
var makeAhead = leaks.MakeAhead
