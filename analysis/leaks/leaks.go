// Package leaks turns a heap graph into a leak report: objects that retain more than a share of
// the heap, the accumulation point below each, the shortest strong path from a GC root that keeps
// each alive, the top objects by retained and by dynamic size, and retained size by class. It
// knows nothing of HPROF; the caller names the nodes.
package leaks

import (
	"errors"

	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/memory"
	"github.com/heapledger/heapledger/analysis/progress"
)

// Input is the graph to analyse and what the analysis needs to know about its nodes.
type Input struct {
	Graph *heapgraph.Graph
	// Weak holds the edges that do not keep their target alive (referents of weak, soft, phantom
	// and final references). Every analysis leaves them out: the thesis defines the retained
	// ("garbage collector") size as what the collector frees with the object, and the collector
	// does not keep an object for a weak reference to it. Objects held only that way are counted
	// apart, in Report.OnlyWeak.
	Weak heapgraph.EdgeSet
	// ClassOf gives each node's class index below NumClasses (NoNode for the super root).
	ClassOf    []uint32
	NumClasses int
	// ClassObjects holds the class objects, a bit per node (nil: none). Dynamic sizes do not
	// follow references into class objects (except from the super root, when a class is a GC
	// root): every instance refers to its class, and through the class loader each class
	// reaches every other, so following them would give almost every object the dynamic size of
	// the whole heap. The thesis's dumps had no such edges. (A bit set, not a function: it is
	// asked once per reference.)
	ClassObjects heapgraph.EdgeSet
	// Labels, if set, puts some nodes into groups (heapledger labels the objects its runtime
	// tracked with their account and allocation site): the report then sums retained sizes per
	// group (Report.ByLabel) and below each suspect's accumulation point (Suspect.Held).
	Labels *dominators.Labels
	// Apart, a bit per node (nil: none), holds nodes the caller set apart from the analysis
	// (heapledger's own objects in a dump of a program it ran): every edge into or out of them
	// is in Weak, so no root reaches them, and they are counted in no figure, not even among the
	// objects only weak references hold; ApartEdges is how many edges that is, left out of
	// Stats.Edges, and each is a component of its own, left out of Stats.Components and of the
	// ranking by dynamic size.
	Apart      heapgraph.EdgeSet
	ApartEdges int
}

// Options tune the report.
type Options struct {
	// Threshold is the share of the reachable heap (0..1) an object must retain to be a suspect.
	Threshold float64
	// Top is how many objects and classes each ranking lists.
	Top int
	// DropRatio drives the accumulation point search: starting at a suspect, follow the dominator
	// tree to the biggest child while it retains at least this share of its parent. With classes
	// known, a linked chain (objects whose classes recur every few steps) counts as one object:
	// once an element retains less than this share of the chain's head, the point is the head.
	DropRatio float64
	// Monitor, if set, is told of each step as it starts, and cancels the analysis (see
	// progress.Monitor). Run gives the memory a step frees back to the system itself.
	Monitor *progress.Monitor
	// Spill lets Run move columns and work arrays that a phase does not read to temporary
	// files, so that the analysis of a big heap peaks lower (see Run).
	Spill bool
	// MemoryLimit, if above 0, is resident memory (bytes) the analysis aims to stay under: work
	// that could run beside other work on another core, holding more memory meanwhile, does so
	// only if that leaves the process under it (see Run).
	MemoryLimit int64
	// Ahead, if set, holds arrays made for Run's first phase ahead of it (see MakeAhead).
	Ahead *Ahead
	// Leave names input columns that Run, with Spill, need not bring back from their temporary
	// files when it returns, for a caller that will not read them: they may be nil in in then.
	// Reading them back takes time and fresh memory for nothing, at the end of the analysis.
	// Their files go as soon as Run has read them for the last time.
	Leave Columns
	// Memory is where the analysis's arrays come from and its columns go (nil: make, and the
	// system's temporary directory).
	Memory *memory.Budget
	// Views, with Spill, has the other columns come back as read-only views of their files
	// (memory.Spilled.View), never unmapped, instead of copies: for a caller that reads a
	// few elements of them and ends, such as a command printing the report.
	Views bool
}

// Columns names the input's columns.
type Columns struct {
	Sizes bool // Graph.Size
	Succ  bool // Graph.Succ
	Weak  bool // Input.Weak
}

// DefaultOptions are the defaults of Eclipse MAT's leak suspects report: 10% and a 0.7 drop.
var DefaultOptions = Options{Threshold: 0.10, Top: 20, DropRatio: 0.7}

// Object is one node with its sizes. Dynamic is 0 when it was not computed for this node.
type Object struct {
	Node     uint32
	Shallow  uint64
	Retained uint64
	Dynamic  uint64
}

// Step is one reference on a path: the edge (an index into Graph.Succ) from the previous node,
// and the node it leads to. The first step's edge leaves the super root.
type Step struct {
	Edge uint32
	Node uint32
}

// Suspect is an object that retains more than the threshold share of the heap.
type Suspect struct {
	Object
	Share float64 // of the reachable heap
	// Accumulation is where the retained memory piles up below the suspect (the suspect itself
	// when no single child holds most of it, the head of a linked chain that holds it spread
	// along its elements).
	Accumulation Object
	// Path and AccumulationPath are shortest chains of strong references from a GC root; they are
	// empty when the object is reachable only through weak, soft or phantom references.
	Path, AccumulationPath []Step
	// Held holds, with Input.Labels, per dimension the groups of the labelled objects that the
	// accumulation point retains (itself included), largest retained first: who made what it holds.
	Held [][]dominators.GroupRetained
}

// Component is a strongly connected component ranked by dynamic size: all its members share the
// dynamic size; Node is its lowest-numbered member.
type Component struct {
	Node    uint32
	Members uint32
	Dynamic uint64
}

// Stats describe the graph the way the thesis's result tables do.
type Stats struct {
	Objects        int    // nodes strongly reachable from a GC root
	Edges          int    // references
	TotalBytes     uint64 // shallow sizes of the strongly reachable heap
	Components     int    // strongly connected components (without weak and class edges)
	BigComponents  int    // components of more than one node
	LargestComp    uint32 // members of the largest component
	DAGEdges       int
	DominatingAPs  int    // dominating articulation points of the component DAG
	DynamicVisited uint64 // components expanded by dynamic-size walks
}

// Report is the result of Analyze.
type Report struct {
	Stats       Stats
	Suspects    []Suspect
	TopRetained []Object
	TopDynamic  []Component
	ByClass     []dominators.ClassRetained // largest retained first
	// OnlyWeak counts the objects, and their bytes, that only weak references (or nothing at all)
	// reach; they are outside the dominator tree and the retained sizes.
	OnlyWeak struct{ Objects, Bytes uint64 }
	// ByLabel holds, with Input.Labels, per dimension the groups that have members, largest
	// retained first (see dominators.GroupRetained).
	ByLabel [][]dominators.GroupRetained
}

// Analyze runs the whole analysis: dominator tree, retained sizes, suspects and their
// accumulation points, retained size by class, shortest strong paths, dynamic sizes. It keeps
// every array in memory and cannot fail, so it neither spills nor reports progress nor stops:
// Options.Spill and Options.Monitor are Run's.
func Analyze(in Input, opt Options) *Report {
	opt.Spill, opt.Monitor = false, nil
	rep, err := Run(&in, opt)
	if err != nil {
		panic(err) // no column went out, and nothing cancels
	}
	return rep
}

// Run is Analyze for inputs too big to hold beside the analysis's own arrays: with opt.Spill,
// the input's columns that a step does not read (the graph's edges, offsets and sizes, the
// classes, the weak edges) wait in temporary files while it runs, and so do some of the
// steps' own arrays. The columns are back in in (and its Graph) when Run returns, failed or
// not, perhaps in other arrays of the same contents, so the caller must hold no other
// references to them for the memory to be freed meanwhile. It fails only if a spilled column
// cannot be read back, or the analysis is cancelled (Options.Monitor).
func Run(in *Input, opt Options) (*Report, error) {
	a := Start(in, opt)
	for _, step := range a.Steps() {
		if err := step.Run(); err != nil {
			// The columns come back all the same: the caller's Input is whole again.
			_, ferr := a.Finish()
			return nil, errors.Join(err, ferr)
		}
	}
	return a.Finish()
}
