package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/analysis/heapdump"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/leaks"
	"github.com/heapledger/heapledger/analysis/tracked"
)

func init() { registerSub("heap", heapAnalyzeCmd) }

var heapAnalyzeCmd = &cli.Command{
	Name:      "analyze",
	Usage:     "leak suspects, dominator tree, retained and dynamic sizes of a heap dump",
	ArgsUsage: "DUMP",
	Description: `Loads the whole object graph of an HPROF heap dump and reports:
  - leak suspects: the topmost objects retaining more than --threshold percent of the heap (and,
    below an object with two or more children over the threshold, those children too), each with
    the accumulation point below it (follow the dominator tree to the biggest child while it keeps
    at least 70% of its parent; a linked chain on the way, objects whose classes recur within four
    steps, such as a list's nodes or a lazy sequence's alternating cells, counts as one object:
    once an element keeps less than 70% of the chain's head, the head is the point) and the
    shortest chain of strong references from a GC root to both;
  - the --top objects by retained size (what the collector would free with the object) and by
    dynamic size (everything reachable from the object), and retained size by class.

Retained sizes come from the dominator tree of the graph from a super root over all GC roots.
References from weak, soft, phantom and final references to their referents keep nothing alive,
so they are left out of every analysis; objects held only that way are reported apart. Dynamic
sizes (the dynaTrace thesis's definition, computed through strongly connected components and
dominating articulation points) also leave out references into class objects, which every
instance has and through which every object would reach almost the whole heap. Objects of a
strongly connected component share one dynamic size and are listed once, with their number.
Objects that nothing reaches from a GC root, garbage the dump caught, are counted and left out;
--keep-unreachable analyses them too, from roots chosen by the thesis's rule (every such object
without referrers, and the lowest id of each cycle that nothing else refers to). A dump with no
GC-root records is always analysed that way.

A dump of a program heapledger ran with liveness (--liveness all or sample:N) holds the runtime's
tracking references: one per tracked object, naming the object and the account and allocation
site it was charged to. The report then gives retained size per memory account and per
allocation site: the size of the union of the retained sets of the live objects the account (the
site) allocated, what the collector would free with any of them, counted once (an object two of
them hold together, neither alone, is not in it, as in retained size by class). Below each
suspect's accumulation point it lists the accounts and sites that allocated what the point holds.
With liveness all the figures are exact. With sample:N they are estimates from every N-th
allocation of each site on each thread, marked so, with an error of two standard errors (about
95%) and a sure lower bound ("at least": what the tracked objects alone retain); what objects of
a site that allocated fewer than N of them hold alone is never sampled and not in them.
heapledger's own objects (the tracking references, the lists that link them, its counters and
tables: everything the heap reaches only through heapledger's classes) are counted apart and left
out of every other figure, suspect and ranking. Names come from the table the runtime holds in
the dumps it writes itself (heapledger.snapshot.heapdump, --budget-action dump, the JMX heapDump
operation); for a dump taken with jmap or jcmd, --table (the rewrite's OUTPUT.table.tsv) or
--snapshot (a snapshot of the same run) names them, and without either the report shows IDs.
See docs/runtime.md, "Heap dumps".

Memory: to keep its peak below the dump's size (for a gzip-compressed dump, the size it inflates
to), the analysis moves the per-object columns a phase does not read to temporary files in $TMPDIR
(or /tmp), unlinked as soon as they are made, so nothing is left behind, and maps them back
read-only while a later phase reads them; they need disk space of the same order as the memory
they save. When they cannot be written (no such directory, a full disk) the columns stay in
memory, the results are the same, and a warning on stderr says how much stayed and why. Work
that could overlap on the second core while holding more memory (making the two searches'
first arrays while the graph is built; the search for strongly connected components, beside the
dominator tree's depth-first search; the listing of each object's referrers, split between the
cores; summing the components' sizes beside the component graph's dominator tree; working out
its dominating articulation points beside the walks that size them), and the
depth-first search's order, kept in memory rather than in a temporary file, do so only if the
process stays under the dump's size (for a gzip dump, the arrays made while the graph is built
count against its compressed size).

Page cache: once the dump has been read for the last time (all but the few records of the
objects the report names), its pages are dropped from the system's page cache as the analysis
needs memory, from the file's end down, 128 MB at a time: the analysis takes the pages just freed
instead of fresh ones. On a virtual machine that hands the memory its guest leaves free back to
the host, a fresh page costs 25 to 50 times as much as one just freed, and on a dump of 2 GB
this took about a fifth off an analysis started on a machine at rest. The file is not changed;
the next program to read it reads the dropped part from disk. --keep-page-cache leaves the page
cache alone, for a dump about to be analysed again.

--timings prints how long each phase took, wall and CPU seconds, and the peak resident memory so
far (where the system tells it), on stderr.`,
	Flags: append(dumpFlags(),
		&cli.Float64Flag{Name: "threshold", Value: 100 * leaks.DefaultOptions.Threshold, Usage: "percent of the heap an object must retain to be a leak suspect"},
		&cli.IntFlag{Name: "top", Value: leaks.DefaultOptions.Top, Usage: "how many objects and classes each ranking lists"},
		&cli.BoolFlag{Name: "keep-unreachable", Usage: "analyse objects no GC root reaches too (attached to the super root by the thesis's rule) instead of only counting them; a dump without GC-root records is always analysed so"},
		&cli.BoolFlag{Name: "keep-page-cache", Usage: "leave the dump's pages in the page cache instead of giving them to the analysis once read (see Page cache)"},
		&cli.BoolFlag{Name: "timings", Usage: "print on stderr how long each phase took (wall and CPU seconds) and the peak memory so far, a line per phase"},
		&cli.StringFlag{Name: "table", Usage: "name the accounts and sites of heapledger's tracking references from this table (the rewrite's OUTPUT.table.tsv), for a dump that holds none, such as one jmap or jcmd took; the dump's own table wins where both name an ID"},
		&cli.StringFlag{Name: "snapshot", Usage: "name the accounts and sites of heapledger's tracking references from a snapshot of the same run (it names the sites that counted), for a dump that holds no table"},
	),
	Action: func(c *cli.Context) error {
		args, err := interspersedArgs(c, c.Command.Flags)
		if err != nil {
			return fmt.Errorf("heap analyze: %w", err)
		}
		if len(args) != 1 {
			return fmt.Errorf("heap analyze: want exactly one DUMP argument, got %d", len(args))
		}
		th := c.Float64("threshold")
		if th <= 0 || th > 100 {
			return fmt.Errorf("heap analyze: --threshold %g: want a percentage above 0 and at most 100", th)
		}
		if c.Int("top") < 0 {
			return fmt.Errorf("heap analyze: --top %d: want 0 or more", c.Int("top"))
		}
		// The big arrays become garbage between phases, where they go back to the system as they
		// are dropped (heapgraph.Release, Scratch.Trim, spilling) or by a collection that the
		// phase after starts with. A lower GOGC does not lower the peak: it only made the
		// collector run more often on the big arrays each phase allocates, stopping every
		// goroutine to scan its stack each time (at 20%, 51 collections on the 47 MB dump, and
		// 7% of its CPU samples were the collector waiting for busy goroutines to stop). A
		// higher one spares the collections Go's pace would start in the middle of a phase,
		// counting arrays given back already as heap until collected: at 400 the 47 MB dump's
		// components phase ran 2.5 ms faster than at 100, and the peaks measured the same.
		// GOGC still overrides.
		if os.Getenv("GOGC") == "" {
			defer debug.SetGCPercent(debug.SetGCPercent(400))
		}
		stderr := errWriter(c)
		path := args[0]
		// Names given are read before the dump, whose reading takes far longer than a bad file
		// needs to be refused.
		given, err := givenNames(c.String("table"), c.String("snapshot"))
		if err != nil {
			return fmt.Errorf("heap analyze: %w", err)
		}
		p := newProgress(stderr, c.Bool("progress"))
		kept0, keptBytes0, _ := heapgraph.SpillFailures()
		phases := newPhases(stderr, c.Bool("progress"), c.Bool("timings"))
		defer phases.end()
		// The analysis aims to peak under the dump's size (docs/heapdump-benchmarks.md): work
		// that could overlap on another core does so only within it.
		size := int64(-1)
		if st, err := os.Stat(path); err == nil {
			size = st.Size()
		}
		// Building the graph runs mostly on one core; the other meanwhile makes the first
		// phase's arrays and faults their pages in, if the memory the file's size allows for
		// leaves room for them (for a gzip dump, the compressed size: all that is known then).
		var ahead *leaks.Ahead
		stopGiving := func() {}
		defer func() { stopGiving() }()
		building := func(nodes int) {
			// The file has been read for the last time: its page cache is the memory the
			// arrays made from here on take (see Page cache in the help).
			// Giving is an optimisation: a file whose cache cannot be given is analysed all the
			// same.
			if !c.Bool("keep-page-cache") {
				if stop, err := giveCache(path); err == nil {
					stopGiving = stop
				}
			}
			if r := heapgraph.Resident(); size >= 0 && r >= 0 {
				ahead = makeAhead(nodes, size-r)
			}
		}
		d, err := heapdump.Load(path, heapdump.Options{
			Dump: c.Int("dump"), Compressed: c.String("compressed"), KeepUnreachable: c.Bool("keep-unreachable"),
			AllowPartial: c.Bool("partial"), Building: building, Watch: []heapdump.Watch{tracked.Watch},
			Progress: func(phase string, done, total int64) { p.update(phase+" "+path, done, total) },
			Phase: func(name string) {
				// The passes over the file show their bytes; the steps after them show as phases.
				pass := strings.HasPrefix(name, "reading ")
				if !pass {
					p.done()
				}
				phases.begin(name, !pass)
			},
		})
		p.done()
		phases.stop()
		if err != nil {
			if strings.Contains(err.Error(), "input ends at offset") && !c.Bool("partial") {
				err = fmt.Errorf("%w (--partial analyses the part that is there)", err)
			}
			return fmt.Errorf("heap analyze: %w", err)
		}
		for _, w := range d.Warnings {
			if !strings.HasPrefix(w, path) {
				w = path + ": " + w
			}
			fmt.Fprintf(stderr, "warning: %s\n", w)
		}
		opt := leaks.DefaultOptions
		opt.Threshold = th / 100
		opt.Top = c.Int("top")
		opt.Phase = phases.start
		opt.Ahead = ahead
		// The analysis moves the columns a phase does not read to temporary files meanwhile, and
		// the Dump must not hold them too for that to free any memory.
		opt.Spill = true
		// Naming the reported objects needs their ids, kinds and classes and the edge offsets,
		// not the edges, the sizes or the weak edges: those stay out when the analysis ends.
		opt.Leave = leaks.Columns{Sizes: true, Succ: true, Weak: true}
		// Those come back as views of their files, whose pages the few lookups read in, rather
		// than as copies in fresh memory.
		opt.Views = true
		// For a gzip-compressed dump the limit is the size it inflates to: the graph is the same
		// as the plain file's.
		if size >= 0 {
			opt.MemoryLimit = max(size, d.Bytes)
		}
		in := &leaks.Input{
			Graph: d.Graph, Weak: heapgraph.EdgeSet(d.Weak), ClassOf: d.ClassOf, NumClasses: len(d.Classes),
			ClassObjects: d.ClassObjects(),
		}
		ledger, err := findLedger(d, given, in, func(w string) { fmt.Fprintf(stderr, "warning: %s\n", w) }, phases.start)
		if err != nil {
			return fmt.Errorf("heap analyze: %w", err)
		}
		d.Weak, d.ClassOf = nil, nil
		phases.begin("setting columns aside", true)
		d.Park()
		rep, err := leaks.Run(in, opt)
		d.ClassOf = in.ClassOf
		if err != nil {
			return fmt.Errorf("heap analyze: %s: %w", path, err)
		}
		// The ids come back as views too: nothing needs the memory the analysis leaves behind,
		// which goes back to the system as the command ends.
		d.Graph.Size, d.Graph.Succ, in.Weak, in.Graph = nil, nil, nil, nil
		opt.Phase("naming references")
		if err := d.UnparkViews(); err != nil {
			return fmt.Errorf("heap analyze: %w", err)
		}
		v, err := newAnalysisView(d, rep, opt, ledger)
		phases.stop()
		if err != nil {
			return fmt.Errorf("heap analyze: %w", err)
		}
		if n, b, why := heapgraph.SpillFailures(); n > kept0 {
			fmt.Fprintf(stderr, "warning: %d column(s) of the analysis (%d MB) stayed in memory, as their temporary files could not be written (first: %v); the results are the same, the peak memory higher\n", n-kept0, (b-keptBytes0)>>20, why)
		}
		phases.begin("writing the report", false)
		if c.Bool("json") {
			return writeJSON(c.App.Writer, v)
		}
		v.writeText(c.App.Writer)
		return nil
	},
}

// analysisView is the report with every node named, as printed and as JSON.
type analysisView struct {
	Dump      string  `json:"dump"`
	DumpIndex int     `json:"dump_index"`
	Dumps     int     `json:"dumps"`
	Model     string  `json:"size_model"`
	Partial   bool    `json:"partial,omitempty"`
	Threshold float64 `json:"threshold_percent"`
	top       int     // --top: how many rows each ranking lists

	Objects          int    `json:"objects"`
	References       int    `json:"references"`
	Bytes            uint64 `json:"bytes"`
	WeakOnlyObjects  uint64 `json:"weakly_held_objects"`
	WeakOnlyBytes    uint64 `json:"weakly_held_bytes"`
	UnreachableObjs  uint64 `json:"unreachable_objects"`
	UnreachableBytes uint64 `json:"unreachable_bytes"`
	// KeptUnreachable says the unreachable objects were analysed rather than left out
	// (--keep-unreachable, or a dump without GC roots); UnreachableRoots of them were taken as
	// roots by the thesis's rule, the rest being reached from those.
	KeptUnreachable  bool `json:"unreachable_kept"`
	UnreachableRoots int  `json:"unreachable_roots"`

	// Heapledger is what the dump holds of heapledger's runtime, when it ran the program.
	Heapledger *ledgerView `json:"heapledger,omitempty"`

	Suspects    []suspectView   `json:"suspects"`
	TopRetained []objectView    `json:"top_retained"`
	TopDynamic  []componentView `json:"top_dynamic"`
	ByClass     []classView     `json:"retained_by_class"`
	Graph       leaks.Stats     `json:"graph"`
}

type objectView struct {
	Object   string `json:"object"`
	Class    string `json:"class"`
	ID       string `json:"id"`
	Shallow  uint64 `json:"shallow"`
	Retained uint64 `json:"retained"`
	Dynamic  uint64 `json:"dynamic"`
}

type stepView struct {
	Reference string `json:"reference"`
	Object    string `json:"object"`
}

type suspectView struct {
	objectView
	Percent          float64    `json:"percent"`
	Accumulation     objectView `json:"accumulation_point"`
	Path             []stepView `json:"path"`
	AccumulationPath []stepView `json:"accumulation_path"`
	// AllocatedBy says which accounts and sites allocated the objects heapledger tracked that
	// the accumulation point holds (with a dump of a run with liveness).
	AllocatedBy *allocatedView `json:"allocated_by,omitempty"`
}

type componentView struct {
	Object  string `json:"object"`
	Class   string `json:"class"`
	Members uint32 `json:"objects_in_component"`
	Dynamic uint64 `json:"dynamic"`
}

type classView struct {
	Class     string `json:"class"`
	Instances uint64 `json:"instances"`
	Shallow   uint64 `json:"shallow"`
	Retained  uint64 `json:"retained"`
}

func newAnalysisView(d *heapdump.Dump, rep *leaks.Report, opt leaks.Options, ledger *ledgerInDump) (*analysisView, error) {
	v := &analysisView{
		Dump: d.Path, DumpIndex: d.DumpIndex, Dumps: d.Dumps, Model: d.Model.String() + ", " + d.ModelFrom, Partial: d.Partial,
		Threshold: 100 * opt.Threshold, top: opt.Top,
		Objects: rep.Stats.Objects, References: rep.Stats.Edges, Bytes: rep.Stats.TotalBytes,
		WeakOnlyObjects: rep.OnlyWeak.Objects, WeakOnlyBytes: rep.OnlyWeak.Bytes,
		UnreachableObjs: d.Unreachable.Objects, UnreachableBytes: d.Unreachable.Bytes,
		KeptUnreachable: d.UnreachableKept, UnreachableRoots: d.UnreachableRoots,
		Graph: rep.Stats,
	}
	obj := func(o leaks.Object) objectView {
		return objectView{Object: d.Describe(o.Node), Class: d.ClassName(o.Node), ID: fmt.Sprintf("0x%x", d.ObjectID(o.Node)),
			Shallow: o.Shallow, Retained: o.Retained, Dynamic: o.Dynamic}
	}
	// Name every reference on every path with one read of the dump.
	var refs []heapdump.EdgeRef
	addPath := func(path []leaks.Step) {
		from := uint32(0)
		for _, s := range path {
			refs = append(refs, heapdump.EdgeRef{From: from, Index: int(s.Edge - d.Graph.Off[from])})
			from = s.Node
		}
	}
	for _, s := range rep.Suspects {
		addPath(s.Path)
		addPath(s.AccumulationPath)
	}
	names, err := d.EdgeNames(refs)
	if err != nil {
		return nil, err
	}
	steps := func(path []leaks.Step) []stepView {
		out := make([]stepView, len(path))
		for i, s := range path {
			out[i] = stepView{Reference: names[0], Object: d.Describe(s.Node)}
			names = names[1:]
		}
		return out
	}
	for _, s := range rep.Suspects {
		v.Suspects = append(v.Suspects, suspectView{
			objectView: obj(s.Object), Percent: 100 * s.Share, Accumulation: obj(s.Accumulation),
			Path: steps(s.Path), AccumulationPath: steps(s.AccumulationPath), AllocatedBy: ledger.allocated(s),
		})
	}
	if ledger != nil {
		v.Heapledger = ledger.view(rep)
	}
	for _, o := range rep.TopRetained {
		v.TopRetained = append(v.TopRetained, obj(o))
	}
	for _, c := range rep.TopDynamic {
		v.TopDynamic = append(v.TopDynamic, componentView{Object: d.Describe(c.Node), Class: d.ClassName(c.Node), Members: c.Members, Dynamic: c.Dynamic})
	}
	for _, c := range rep.ByClass {
		v.ByClass = append(v.ByClass, classView{Class: d.Classes[c.Class].Name, Instances: c.Instances, Shallow: c.Shallow, Retained: c.Retained})
	}
	return v, nil
}

// pathShown is how many references of a long path the text report prints at each end; the
// JSON report always has them all.
const pathShown = 12

func (v *analysisView) writeText(w io.Writer) {
	fmt.Fprintf(w, "# %s (dump %d of %d; %s)%s\n", v.Dump, v.DumpIndex, v.Dumps, v.Model, partialMark(v.Partial))
	fmt.Fprintf(w, "heap: %d objects, %d references, %d bytes strongly reachable", v.Objects, v.References, v.Bytes)
	fmt.Fprintf(w, "; %d objects (%d bytes) held only by weak/soft/phantom/final references", v.WeakOnlyObjects, v.WeakOnlyBytes)
	if v.KeptUnreachable {
		// Only some become roots (no referrers, or the lowest id of a cycle nothing else
		// refers to); the others are reached from them.
		fmt.Fprintf(w, "; %d unreachable objects (%d bytes) analysed, %d of them taken as roots by the thesis's rule\n",
			v.UnreachableObjs, v.UnreachableBytes, v.UnreachableRoots)
	} else {
		fmt.Fprintf(w, "; %d unreachable objects (%d bytes) left out\n", v.UnreachableObjs, v.UnreachableBytes)
	}
	if v.Heapledger != nil {
		v.Heapledger.writeSummary(w)
	}

	fmt.Fprintf(w, "\nleak suspects (objects retaining more than %g%% of the heap): %d\n", v.Threshold, len(v.Suspects))
	for i, s := range v.Suspects {
		fmt.Fprintf(w, "%2d. %s retains %d bytes (%.1f%%); dynamic size %d\n", i+1, s.Object, s.Retained, s.Percent, s.Dynamic)
		if s.Accumulation.Object != s.Object {
			fmt.Fprintf(w, "    memory accumulates in %s, retaining %d bytes (%.1f%%)\n", s.Accumulation.Object, s.Accumulation.Retained, 100*float64(s.Accumulation.Retained)/float64(max(v.Bytes, 1)))
		}
		s.AllocatedBy.writeText(w, v.Heapledger != nil && v.Heapledger.Estimates)
		writePath(w, "    shortest path from "+rootKind(s.Path)+":", s.Path)
		if s.Accumulation.Object != s.Object {
			writePath(w, "    shortest path to the accumulation point:", s.AccumulationPath)
		}
	}

	fmt.Fprintf(w, "\ntop %d objects by retained size\n%14s %14s %12s  %s\n", len(v.TopRetained), "retained", "dynamic", "shallow", "object")
	for _, o := range v.TopRetained {
		fmt.Fprintf(w, "%14d %14d %12d  %s\n", o.Retained, o.Dynamic, o.Shallow, o.Object)
	}
	fmt.Fprintf(w, "\ntop %d by dynamic size (objects of one strongly connected component share it)\n%14s %10s  %s\n", len(v.TopDynamic), "dynamic", "objects", "object")
	for _, c := range v.TopDynamic {
		fmt.Fprintf(w, "%14d %10d  %s\n", c.Dynamic, c.Members, c.Object)
	}
	fmt.Fprintf(w, "\nretained size by class (top %d)\n%14s %12s %14s  %s\n", len(v.ByClass), "retained", "instances", "shallow", "class")
	for _, c := range v.ByClass {
		fmt.Fprintf(w, "%14d %12d %14d  %s\n", c.Retained, c.Instances, c.Shallow, c.Class)
	}
	if v.Heapledger != nil {
		v.Heapledger.writeTables(w, v.top)
	}
	g := v.Graph
	fmt.Fprintf(w, "\ngraph: %d strongly connected components (%d with more than one object, the largest %d), %d edges between them, %d dominating articulation points\n",
		g.Components, g.BigComponents, g.LargestComp, g.DAGEdges, g.DominatingAPs)
}

// rootKind names what a path starts from: a GC root, or an unreachable object that the thesis's
// rule made a root (its first step says so; see heapdump.Dump.EdgeNames).
func rootKind(path []stepView) string {
	if len(path) > 0 && path[0].Reference == heapdump.RuleRootEdge {
		return "a root the thesis's rule chose"
	}
	return "a GC root"
}

func writePath(w io.Writer, title string, path []stepView) {
	if len(path) == 0 {
		fmt.Fprintf(w, "%s none: only weak, soft, phantom or final references reach it\n", title)
		return
	}
	fmt.Fprintln(w, title)
	for i, s := range path {
		if len(path) > 2*pathShown && i == pathShown {
			fmt.Fprintf(w, "      ... %d more references (all of them in --json) ...\n", len(path)-2*pathShown)
		}
		if len(path) > 2*pathShown && i >= pathShown && i < len(path)-pathShown {
			continue
		}
		fmt.Fprintf(w, "      %-28s %s\n", s.Reference, s.Object)
	}
}

// phaseProgress names the analysis phase under way on stderr, once it has run for a second, and
// how long it took; only on a terminal unless forced, like progress.
// phases follows the phases of an analysis: with --progress (or on a terminal) it shows a phase
// that runs past phaseShownAfter and how long it took; with --timings it prints every phase's
// wall and CPU seconds, and the total.
type phases struct {
	mu       sync.Mutex
	w        io.Writer
	progress bool
	timings  bool
	name     string
	began    time.Time
	cpu      time.Duration
	timer    *time.Timer
	shown    bool
	wall0    time.Time
	cpuAt0   time.Duration
}

// giveCache is heapgraph.GiveCache, which tests replace to see that the analysis gives the
// dump's page cache only once the file is read and unless asked not to.
var giveCache = heapgraph.GiveCache

// makeAhead is leaks.MakeAhead, which tests replace to see that building the graph asks for the
// analysis's arrays, with the room they choose.
var makeAhead = leaks.MakeAhead

// phaseShownAfter is how long a phase runs before --progress shows it (0: at once, for tests).
var phaseShownAfter = time.Second

func newPhases(w io.Writer, progress, timings bool) *phases {
	return &phases{w: w, progress: progress || isTerminal(w), timings: timings}
}

// start ends the current phase and begins the named one. (The analysis gives the memory a
// phase frees back to the system itself, where there is some: see leaks.Options.Phase.)
func (p *phases) start(name string) {
	p.begin(name, true)
}

// begin is start for a phase that manages its own memory (loading, setting columns aside);
// show false times it without showing it (a pass over the file, which shows its bytes).
func (p *phases) begin(name string, show bool) {
	p.stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.began = name, time.Now()
	if p.timings {
		p.cpu = heapgraph.CPUTime()
		if p.wall0.IsZero() {
			p.wall0, p.cpuAt0 = p.began, p.cpu
		}
	}
	if p.progress && show && phaseShownAfter <= 0 {
		fmt.Fprintf(p.w, "analysing: %s ...\n", name)
		p.shown = true
	} else if p.progress && show {
		p.timer = time.AfterFunc(phaseShownAfter, func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.name == name {
				fmt.Fprintf(p.w, "analysing: %s ...\n", name)
				p.shown = true
			}
		})
	}
}

// stop ends the current phase, reporting its time if its start was shown, and its times with
// --timings.
func (p *phases) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.name == "" {
		return
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	if p.shown {
		fmt.Fprintf(p.w, "analysing: %s took %.1f s\n", p.name, time.Since(p.began).Seconds())
	}
	if p.timings {
		fmt.Fprintf(p.w, "timing: %-30s %8.3f s wall %8.3f s CPU%s\n", p.name, time.Since(p.began).Seconds(), (heapgraph.CPUTime() - p.cpu).Seconds(), peakSoFar())
	}
	p.name, p.shown, p.timer = "", false, nil
}

// end ends the last phase and, with --timings, prints the total.
func (p *phases) end() {
	p.stop()
	if p.timings && !p.wall0.IsZero() {
		fmt.Fprintf(p.w, "timing: %-30s %8.3f s wall %8.3f s CPU%s\n", "total", time.Since(p.wall0).Seconds(), (heapgraph.CPUTime() - p.cpuAt0).Seconds(), peakSoFar())
	}
}

// peakSoFar is the --timings column of the peak resident memory so far, in MB of 2^20 bytes as
// GNU time's is usually quoted, or nothing where it is not known. It only grows: the phase whose
// line first shows the run's peak is the one that set it.
func peakSoFar() string {
	b := heapgraph.PeakResident()
	if b < 0 {
		return ""
	}
	return fmt.Sprintf(" %6d MB peak", b>>20)
}
