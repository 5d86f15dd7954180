package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/analysis/heapdump"
	"github.com/heapledger/heapledger/analysis/leaks"
	"github.com/heapledger/heapledger/analysis/pipeline"
	analysisprogress "github.com/heapledger/heapledger/analysis/progress"
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

Memory: --max-memory is the memory the analysis may take (by default 90% of its cgroup's memory
limit or of the memory available, whichever is less, printed on stderr as "memory budget: ...";
"none" sets no budget). Below the smallest budget the dump can be analysed in (48 MB and 2 bytes
per object) it is refused at once, the error naming that smallest budget: before the file is
read, the objects estimated from its size, or after the first pass, counted. Where the budget is
below what the analysis takes with every array in memory (about the dump's size), the big arrays
(the columns over the objects and the edges, and the phases' work arrays) are files in --temp-dir
mapped into memory: the kernel writes their pages out and reads them back as the memory allows,
and the analysis unmaps the oldest of them whenever its resident memory passes three quarters of
the budget; it looks every 5 ms, so without a cgroup a phase faulting pages in fast may pass the
budget for a moment, in those files' pages, which the kernel can take back when memory runs short.
Where a cgroup's limit holds the budget (the default under a cgroup), they are mapped
in 2 MB pages where the system has them, and the resident memory may pass the budget up to the
cgroup's limit, which the kernel holds. The results are the same under any budget; the smaller it is against the dump, the
more the pages go to disk and back, and the longer the analysis takes (docs/heapdump-benchmarks.md,
Memory model). Without a budget, to keep its peak below the dump's size (for a gzip-compressed
dump, the size it inflates to), the analysis moves the per-object columns a phase does not read
to temporary files in --temp-dir, and maps them back read-only while a later phase reads them.
Every file is unlinked as soon as it is made (by default in $TMPDIR, or /tmp), so nothing is left
behind, interrupted or killed; they need disk space of the order of the memory they save, on a
disk: on a tmpfs the files are memory too. When they cannot be written (no such directory, a
full disk) the columns stay in memory, the results are the same, and a warning on stderr says how
much stayed and why. Work
that could overlap on the second core while holding more memory (making the two searches'
first arrays while the graph is built; the search for strongly connected components, beside the
dominator tree's depth-first search; the listing of each object's referrers, split between the
cores; summing the components' sizes beside the component graph's dominator tree; working out
its dominating articulation points beside the walks that size them), and the
depth-first search's order, kept in memory rather than in a temporary file, do so only if the
process stays under the dump's size and the budget (for a gzip dump, the arrays made while the
graph is built count against its compressed size).

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
	Flags: append(analyzeFlags(),
		&cli.BoolFlag{Name: "json", Usage: "write JSON instead of text"},
		&cli.IntFlag{Name: "top", Value: leaks.DefaultOptions.Top, Usage: "how many objects and classes each ranking lists"},
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
		if err := checkAnalyzeFlags(c); err != nil {
			return fmt.Errorf("heap analyze: %w", err)
		}
		// Names given are read before the dump, whose reading takes far longer than a bad file
		// needs to be refused.
		names, err := givenNames(c.String("table"), c.String("snapshot"))
		if err != nil {
			return fmt.Errorf("heap analyze: %w", err)
		}
		shown := newPhases(errWriter(c), args[0], c.Bool("progress"), c.Bool("timings"))
		defer shown.end()
		rep, err := analyzeDump(c, args[0], names, shown)
		if err != nil {
			return fmt.Errorf("heap analyze: %w", err)
		}
		shown.begin("writing the report", false)
		if c.Bool("json") {
			return writeJSON(c.App.Writer, rep)
		}
		writeAnalysis(c.App.Writer, rep)
		return nil
	},
}

// analyzeFlags are the flags of the analysis itself, which heap analyze and html share.
func analyzeFlags() []cli.Flag {
	var out []cli.Flag
	for _, f := range dumpFlags() {
		if f.Names()[0] != "json" {
			out = append(out, f)
		}
	}
	return append(out,
		&cli.Float64Flag{Name: "threshold", Value: 100 * leaks.DefaultOptions.Threshold, Usage: "percent of the heap an object must retain to be a leak suspect"},
		&cli.BoolFlag{Name: "keep-unreachable", Usage: "analyse objects no GC root reaches too (attached to the super root by the thesis's rule) instead of only counting them; a dump without GC-root records is always analysed so"},
		&cli.BoolFlag{Name: "keep-page-cache", Usage: "leave the dump's pages in the page cache instead of giving them to the analysis once read (see Page cache)"},
		&cli.StringFlag{Name: "max-memory", Usage: "the memory the analysis may take, as 512M or 2G, or none: past what fits, its arrays wait in files in --temp-dir (default: 90% of the cgroup's memory limit or of the memory available, whichever is less, printed on stderr; see Memory)"},
		&cli.StringFlag{Name: "temp-dir", Usage: "directory for the files of the arrays a budget pages and of the columns a phase does not read, on a disk with room (default: $TMPDIR, or /tmp; see Memory)"},
		&cli.BoolFlag{Name: "timings", Usage: "print on stderr how long each phase took (wall and CPU seconds) and the peak memory so far, a line per phase"},
		&cli.StringFlag{Name: "table", Usage: "name the accounts and sites of heapledger's tracking references from this table (the rewrite's OUTPUT.table.tsv), for a dump that holds none, such as one jmap or jcmd took; the dump's own table wins where both name an ID"},
	)
}

// checkAnalyzeFlags refuses flag values the analysis cannot take, before the dump is read.
func checkAnalyzeFlags(c *cli.Context) error {
	if th := c.Float64("threshold"); th <= 0 || th > 100 {
		return fmt.Errorf("--threshold %g: want a percentage above 0 and at most 100", th)
	}
	if c.Int("top") < 0 {
		return fmt.Errorf("--top %d: want 0 or more", c.Int("top"))
	}
	if s := c.String("max-memory"); s != "" && s != "none" {
		if _, err := parseBytes(s); err != nil {
			return fmt.Errorf("--max-memory: %w", err)
		}
	}
	if dir := c.String("temp-dir"); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("--temp-dir %s: not a directory", dir)
		}
	}
	return nil
}

// analyzeDump runs the analysis of the dump at path as the flags of c say (analyzeFlags and
// --top), naming heapledger's accounts and sites from the dump's own table, then from names;
// heap analyze and html share it. An interrupt stops it between two steps of its work; its
// files are gone.
func analyzeDump(c *cli.Context, path string, names *tracked.Names, shown *phases) (*pipeline.Report, error) {
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	maxMemory, err := memoryBudget(c)
	if err != nil {
		return nil, err
	}
	rep, err := pipeline.Analyze(ctx, path, pipeline.Options{
		Dump: c.Int("dump"), Compressed: c.String("compressed"), KeepUnreachable: c.Bool("keep-unreachable"),
		AllowPartial: c.Bool("partial"), Threshold: c.Float64("threshold") / 100, Top: c.Int("top"),
		KeepPageCache: c.Bool("keep-page-cache"), Names: names, Listener: shown, TempDir: c.String("temp-dir"),
		MaxMemory: maxMemory,
	})
	if err != nil && strings.Contains(err.Error(), "input ends at offset") && !c.Bool("partial") {
		err = fmt.Errorf("%w (--partial analyses the part that is there)", err)
	}
	return rep, err
}

// memoryBudget is the analysis's memory budget: --max-memory's, or none for "none", or by
// default a share of the memory the process may use, which it prints.
func memoryBudget(c *cli.Context) (int64, error) {
	switch s := c.String("max-memory"); s {
	case "none":
		return 0, nil
	case "":
		n, from := pipeline.DefaultBudget()
		if n > 0 {
			fmt.Fprintf(errWriter(c), "memory budget: %d MB (%s; --max-memory sets another)\n", n>>20, from)
		}
		return n, nil
	default:
		n, err := parseBytes(s)
		if err != nil {
			return 0, fmt.Errorf("--max-memory: %w", err)
		}
		return n, nil
	}
}

// pathShown is how many references of a long path the text report prints at each end; the
// JSON report always has them all.
const pathShown = 12

func writeAnalysis(w io.Writer, v *pipeline.Report) {
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
		writeLedgerSummary(w, v.Heapledger)
	}

	fmt.Fprintf(w, "\nleak suspects (objects retaining more than %g%% of the heap): %d\n", v.Threshold, len(v.Suspects))
	for i, s := range v.Suspects {
		fmt.Fprintf(w, "%2d. %s retains %d bytes (%.1f%%); dynamic size %d\n", i+1, s.Object, s.Retained, s.Percent, s.Dynamic)
		if s.Accumulation.Object != s.Object {
			fmt.Fprintf(w, "    memory accumulates in %s, retaining %d bytes (%.1f%%)\n", s.Accumulation.Object, s.Accumulation.Retained, 100*float64(s.Accumulation.Retained)/float64(max(v.Bytes, 1)))
		}
		writeAllocated(w, s.AllocatedBy, v.Heapledger != nil && v.Heapledger.Estimates)
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
		writeLedgerTables(w, v.Heapledger, v.Top)
	}
	g := v.Graph
	fmt.Fprintf(w, "\ngraph: %d strongly connected components (%d with more than one object, the largest %d), %d edges between them, %d dominating articulation points\n",
		g.Components, g.BigComponents, g.LargestComp, g.DAGEdges, g.DominatingAPs)
}

// rootKind names what a path starts from: a GC root, or an unreachable object that the thesis's
// rule made a root (its first step says so; see heapdump.Dump.EdgeNames).
func rootKind(path []pipeline.Step) string {
	if len(path) > 0 && path[0].Reference == heapdump.RuleRootEdge {
		return "a root the thesis's rule chose"
	}
	return "a GC root"
}

func writePath(w io.Writer, title string, path []pipeline.Step) {
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

// phases follows the steps of an analysis (a progress.Listener): with --progress (or on a
// terminal) it shows a step that runs past phaseShownAfter and how long it took, and how far a
// pass over the file has got; with --timings it prints every step's wall and CPU seconds, and the
// total; it prints the analysis's warnings.
type phases struct {
	mu       sync.Mutex
	w        io.Writer
	path     string
	bytes    *progress
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

// phaseShownAfter is how long a phase runs before --progress shows it (0: at once, for tests).
var phaseShownAfter = time.Second

func newPhases(w io.Writer, path string, force, timings bool) *phases {
	return &phases{w: w, path: path, bytes: newProgress(w, force), progress: force || isTerminal(w), timings: timings}
}

// Begin begins a step: one that reads the file shows its bytes (Read), the others show as steps.
func (p *phases) Begin(s analysisprogress.Step) {
	if !s.Pass {
		p.bytes.done()
	}
	p.begin(s.Name, !s.Pass)
}

// Read shows how far the pass under way has got.
func (p *phases) Read(done, total int64) {
	p.mu.Lock()
	name := p.name
	p.mu.Unlock()
	p.bytes.update(name+" "+p.path, done, total)
}

// Warn prints a warning of the analysis.
func (p *phases) Warn(msg string) {
	p.bytes.done()
	fmt.Fprintf(p.w, "warning: %s\n", msg)
}

// begin ends the current step and begins the named one; show false times it without showing
// it (a pass over the file, which shows its bytes).
func (p *phases) begin(name string, show bool) {
	p.stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.began = name, time.Now()
	if p.timings {
		p.cpu = analysisprogress.CPUTime()
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
		fmt.Fprintf(p.w, "timing: %-30s %8.3f s wall %8.3f s CPU%s\n", p.name, time.Since(p.began).Seconds(), (analysisprogress.CPUTime() - p.cpu).Seconds(), peakSoFar())
	}
	p.name, p.shown, p.timer = "", false, nil
}

// end ends the last phase and, with --timings, prints the total.
func (p *phases) end() {
	p.stop()
	if p.timings && !p.wall0.IsZero() {
		fmt.Fprintf(p.w, "timing: %-30s %8.3f s wall %8.3f s CPU%s\n", "total", time.Since(p.wall0).Seconds(), (analysisprogress.CPUTime() - p.cpuAt0).Seconds(), peakSoFar())
	}
}

// peakSoFar is the --timings column of the peak resident memory so far, in MB of 2^20 bytes as
// GNU time's is usually quoted, or nothing where it is not known. It only grows: the phase whose
// line first shows the run's peak is the one that set it.
func peakSoFar() string {
	b := analysisprogress.PeakResident()
	if b < 0 {
		return ""
	}
	return fmt.Sprintf(" %6d MB peak", b>>20)
}
