// Package leaks turns a heap graph into a leak report: objects that retain more than a share of
// the heap, the accumulation point below each, the shortest strong path from a GC root that keeps
// each alive, the top objects by retained and by dynamic size, and retained size by class. It
// knows nothing of HPROF; the caller names the nodes.
package leaks

import (
	"container/heap"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"runtime/debug"
	"sort"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/dynsize"
	"github.com/heapledger/heapledger/analysis/heapgraph"
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
	// asked once per reference, a hundred million times on a 2 GB dump.)
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
	// Phase, if set, is called as each phase starts, for progress display. Run gives the memory
	// a phase frees back to the system itself.
	Phase func(name string)
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
	// Reading them back takes time and fresh memory for nothing (a fifth of the edges' and
	// sizes' bytes of a dump, at the end of its analysis). Their files go as soon as Run has
	// read them for the last time.
	Leave Columns
	// Views, with Spill, has the other columns come back as read-only views of their files
	// (heapgraph.Spilled.View), never unmapped, instead of copies: for a caller that reads a
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
// every array in memory (see Run).
func Analyze(in Input, opt Options) *Report {
	opt.Spill = false
	rep, err := Run(&in, opt)
	if err != nil {
		panic(err) // only spilled arrays can fail to come back
	}
	return rep
}

// Run is Analyze for inputs too big to hold beside the analysis's own arrays: with opt.Spill,
// the input's columns that a phase does not read (the graph's edges, offsets and sizes, the
// classes, the weak edges) wait in temporary files while it runs, and so do some of the
// phases' own arrays. The columns are back in in (and its Graph) when Run returns, perhaps in
// other arrays of the same contents, so the caller must hold no other references to them for
// the memory to be freed meanwhile. It fails only if a spilled column cannot be read back.
func Run(in *Input, opt Options) (rep *Report, err error) {
	g := in.Graph
	n := g.N() // taken now: g.N counts the offsets, which are out at times
	phase := func(name string) {
		if opt.Phase != nil {
			opt.Phase(name)
		}
	}
	// freeing is phase for a phase that starts after the last one dropped arrays: the memory
	// goes back to the system first, so that the new phase's peak does not stack on it. (Each
	// collection costs 0.4-1 ms even with nothing to free, and half the phases start with
	// nothing: the small benchmark dump's spent 2 ms on them.)
	freeing := func(name string) {
		debug.FreeOSMemory()
		phase(name)
	}
	rep = &Report{}
	cols := &parked{on: opt.Spill}
	defer func() {
		if e := cols.unparkBut(in, opt.Leave, opt.Views); e != nil && err == nil {
			rep, err = nil, e
		}
		cols.close()
	}()

	// The phases hand their work arrays on to the next (see heapgraph.Scratch).
	sc := &heapgraph.Scratch{Spill: opt.Spill}
	defer sc.Drop()
	edges := len(g.Succ)
	// The edges the dynamic sizes skip are marked on the other core while the shallow sizes and
	// the classes go out: the components' search beside the depth-first search then starts at
	// once, where marking them first made it the longer of the two (medium benchmark dump: the
	// search phase 146 -> 132 ms, setting columns aside 12 -> 20 ms).
	var early chan heapgraph.EdgeSet
	if runtime.GOMAXPROCS(0) >= 2 {
		ch := make(chan heapgraph.EdgeSet, 1)
		early = ch
		go func() { ch <- dynamicSkip(g, in.Weak, in.ClassObjects) }()
	}
	cols.park(in, true, true, false)
	freeing("depth-first search")
	// The dynamic sizes' search for strongly connected components reads only the edges, as the
	// dominators' depth-first search does, which has one core to itself: the components are
	// found on the other meanwhile, if the memory allows, and wait, a word per node, for their
	// phase. Both searches' arrays come on top of what is resident now: four words per node and
	// a bit per edge for the depth-first search (three arrays, and its stack of open nodes, a
	// word per node at worst); a word per node and a bit per edge for the other, and
	// its stacks, whose size the graph's shape decides (a frame per node on the deepest path).
	// Arrays made ahead (Options.Ahead) are resident already, as far as their pages are in.
	// Under a memory limit the search gets what the limit leaves for its stacks and gives up if
	// it needs more; it then runs in its own phase.
	var skip heapgraph.EdgeSet
	var found *dynsize.Found
	var foundDone chan struct{}
	// Arrays made ahead go to the searches that take them: each search's first arrays.
	var searchSc *heapgraph.Scratch
	faulted := int64(0) // bytes of them resident already, counted in resident()
	if a := opt.Ahead; a != nil {
		arrays := a.take(n)
		if len(arrays) > 0 {
			faulted = a.faulted.Load()
		}
		sc.Give(arrays[:min(len(arrays), dfsArrays)]...)
		if len(arrays) > dfsArrays {
			searchSc = &heapgraph.Scratch{}
			searchSc.Give(arrays[dfsArrays:]...)
		}
	}
	stackRoom, limited := int64(0), opt.MemoryLimit > 0
	if limited {
		if r := resident(); r >= 0 {
			stackRoom = opt.MemoryLimit - r - (20*int64(n) + int64(edges)/4) + faulted
		}
	}
	var room *dynsize.StackRoom
	if limited {
		room = dynsize.NewStackRoom(stackRoom)
	}
	if runtime.GOMAXPROCS(0) >= 2 && (!limited || stackRoom >= minStackRoom) {
		foundDone = make(chan struct{})
		go func() {
			defer close(foundDone)
			skip = <-early
			found = dynsize.SearchWithin(g, skip, searchSc, room)
			if found == nil {
				// Memory is short: the set of edges skipped is not kept through the peak either;
				// the components' phase works it out again.
				skip = nil
			}
			if besideDone != nil {
				besideDone(found != nil)
			}
		}()
	}
	if foundDone == nil {
		// Not searched beside: the edges skipped are worked out again in the components' phase,
		// rather than held through the peak (the marking, which reads the edges, ends first: they
		// may go out), and the search's array waits for that phase.
		if early != nil {
			<-early
		}
		if searchSc != nil {
			searchSc.MoveTo(sc)
		}
	}
	searched := dominators.DepthFirst(g, in.Weak, sc)
	freeing("dominator tree")
	// Split between two cores, the predecessor lists take a word per node more, on top of the
	// lists themselves (about half a word per edge; unsplit, about what the preorder array
	// they replace gave back). The components' search, if it is still running, is held from
	// here to what its stacks hold and searchSlack more, which is counted; past that it gives
	// up, to run in its own phase. (Counting all the room it was left kept the lists from
	// being split on the medium and large dumps, where the search ends a little after the
	// depth-first search with a megabyte or two of stacks.)
	now := resident()
	if foundDone != nil && now >= 0 && room != nil {
		select {
		case <-foundDone:
		default:
			now += room.Hold(searchSlack)
		}
	}
	// The preorder stays in memory, rather than going out to a file and back, where a word per
	// node more leaves the split lists under the limit; with no limit known it goes out.
	more := 4*int64(n) + 2*int64(edges)
	split := !limited || beside(now, more, opt.MemoryLimit)
	keep := limited && beside(now, more+4*int64(n), opt.MemoryLimit)
	searched.ListPredecessorsKeeping(g, in.Weak, split, keep)
	if foundDone != nil {
		<-foundDone // before the edges go out
	}
	// The rest of the tree, the retained sizes and the tree's child lists need no edges until
	// the paths are searched. They go out on the other core while the rest of the tree, which
	// reads none of the input, is worked out on one (on the medium benchmark dump, 46 ms of
	// writing beside about 100 ms of the tree); the tree's new array takes one the lists gave back.
	parkedEdges := make(chan struct{})
	go func() {
		defer close(parkedEdges)
		cols.park(in, false, false, true)
	}()
	tree, err := searched.Finish()
	<-parkedEdges
	if err != nil {
		return nil, err
	}
	if err := cols.unpark(in, true, false, false); err != nil {
		return nil, err
	}
	// The child lists take two of the arrays the tree's computation left; the others would sit
	// idle, resident, through the retained-size phases, which is where memory would then peak.
	// Trim gives them back to the system itself: no collection is needed (one here, and before
	// the suspects and the components, freed nothing more: 0.4-0.6 ms each on the small
	// benchmark dump).
	sc.Trim(2)
	phase("retained sizes")
	// The dominator tree's child lists are built on the other core meanwhile; nothing else
	// touches the tree's scratch arrays until they are done.
	childrenDone := make(chan struct{})
	go func() { tree.Children(); close(childrenDone) }()
	ret := tree.Retained(g)
	total := ret[0]
	rep.Stats = Stats{Objects: len(tree.Order) - 1, Edges: edges - in.ApartEdges, TotalBytes: total}
	for v := 1; v < n; v++ {
		if !tree.Reachable(uint32(v)) && !in.Apart.Has(uint32(v)) {
			rep.OnlyWeak.Objects++
			rep.OnlyWeak.Bytes += g.SizeOf(uint32(v))
		}
	}
	<-childrenDone
	// Grouping by class needs only the child lists and the retained sizes.
	tree.ReleaseNodes()
	sc.Trim(0)

	phase("leak suspects")
	if err := cols.unpark(in, false, true, false); err != nil {
		return nil, err
	}
	for _, v := range topBy(ret, opt.Top, func(v uint32) bool { return v != 0 }) {
		rep.TopRetained = append(rep.TopRetained, Object{Node: v, Shallow: g.SizeOf(uint32(v)), Retained: ret[v]})
	}
	// Retained sizes only shrink down the dominator tree, so the objects over the threshold form
	// a subtree below the super root. Its top objects are suspects, and so are the objects over
	// the threshold below a split, where two or more children are over it: one object holding two
	// big collections should name both, not stop at the holder for want of a single big child.
	limit := opt.Threshold * float64(total)
	off, kids := tree.Children()
	over := func(v uint32) bool { return total > 0 && float64(ret[v]) > limit }
	stack := []uint32{0}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := 0
		for _, k := range kids[off[v]:off[v+1]] {
			if over(k) {
				n++
				stack = append(stack, k)
			}
		}
		if n < 2 && v != 0 {
			continue
		}
		for _, k := range kids[off[v]:off[v+1]] {
			if over(k) {
				s := Suspect{Object: Object{Node: k, Shallow: g.SizeOf(k), Retained: ret[k]},
					Share: float64(ret[k]) / float64(total)}
				a := accumulationPoint(k, ret, off, kids, opt.DropRatio, in.ClassOf)
				s.Accumulation = Object{Node: a, Shallow: g.SizeOf(a), Retained: ret[a]}
				rep.Suspects = append(rep.Suspects, s)
			}
		}
	}
	sort.Slice(rep.Suspects, func(i, j int) bool {
		if rep.Suspects[i].Retained != rep.Suspects[j].Retained {
			return rep.Suspects[i].Retained > rep.Suspects[j].Retained
		}
		return rep.Suspects[i].Node < rep.Suspects[j].Node
	})

	phase("retained size by class")
	if in.ClassOf != nil {
		byClass := tree.ByClass(g, ret, in.ClassOf, in.NumClasses)
		sort.SliceStable(byClass, func(i, j int) bool { return byClass[i].Retained > byClass[j].Retained })
		for len(byClass) > 0 && byClass[len(byClass)-1].Instances == 0 {
			byClass = byClass[:len(byClass)-1]
		}
		rep.ByClass = byClass[:min(len(byClass), opt.Top)]
	}
	if in.Labels != nil {
		// The heap's walk on one core, the suspects' on the other: below a suspect that holds
		// most of the heap, its walk is about as long.
		phase("retained size by label")
		heapgraph.Both(func() { rep.ByLabel = groupsHeld(tree.ByLabel(g, ret, in.Labels, 0, in.ClassOf)) }, func() {
			for i := range rep.Suspects {
				s := &rep.Suspects[i]
				s.Held = groupsHeld(tree.ByLabel(g, ret, in.Labels, s.Accumulation.Node, in.ClassOf))
			}
		})
	}
	// Neither the retained sizes nor the tree are needed again; the rest of the analysis reads
	// the edges, and the sizes only once the components are condensed.
	heapgraph.Release(ret)
	ret = nil
	tree.Release()
	off, kids = nil, nil
	sc.Trim(2)
	cols.park(in, true, true, false)
	if err := cols.unpark(in, false, false, true); err != nil {
		return nil, err
	}

	phase("paths from GC roots")
	var targets []uint32
	for _, s := range rep.Suspects {
		targets = append(targets, s.Node, s.Accumulation.Node)
	}
	via, queue := sc.Uint32s(n), sc.Uint32s(n)
	paths := shortestPaths(g, in.Weak, targets, via, queue)
	sc.Release(via, queue)
	// Only what the dynamic sizes will use stays; the rest goes back to the system as the next
	// phase starts.
	sc.Trim(dynsize.WorkArrays)
	for i := range rep.Suspects {
		s := &rep.Suspects[i]
		s.Path, s.AccumulationPath = paths[s.Node], paths[s.Accumulation.Node]
	}

	phase("strongly connected components")
	if found == nil {
		skip = dynamicSkip(g, in.Weak, in.ClassObjects)
		found = dynsize.Search(g, skip, sc)
	}
	dyn := dynsize.CondensedFrom(g, skip, found, sc)
	skip, found = nil, nil
	apart := leaveApart(dyn, in.Apart)
	dagEdges := len(dyn.DAG.Succ)
	// The component DAG is all the rest needs, but for the shallow sizes. The edges that the
	// caller does not want back are read no more: their files go now (see forget).
	cols.park(in, false, false, true)
	cols.forget(Columns{Succ: opt.Leave.Succ, Weak: opt.Leave.Weak})
	// The components' sizes are summed, and the hub chosen, on the other core while the DAG's
	// dominator tree is worked out on one, if the memory allows: the shallow sizes back in, a
	// word per node, and the components' sizes, a word per component, beside that step's four
	// arrays.
	// The points are then worked out on the core the tree leaves free, through the walks of the
	// next phase, which wait on them, if a word per component more fits beside those: on top of
	// what the walks take, their sizes and marks, whose memory the shallow sizes and the
	// component column give back (see below).
	weighed := false
	var points <-chan struct{}
	if count := dyn.DAG.N(); runtime.GOMAXPROCS(0) >= 2 && (!limited || beside(resident(), 4*int64(n)+5*int64(count), opt.MemoryLimit)) {
		if err := cols.unpark(in, true, false, false); err != nil {
			return nil, err
		}
		pointsBeside := !limited || beside(resident(), 4*int64(n)+9*int64(count), opt.MemoryLimit)
		points = dyn.DominateAndWeigh(g, sc, heapgraph.Make[uint32](count), pointsBeside)
		weighed = true
	} else {
		dyn.Dominate(sc)
	}
	// The arrays of the component DAG's dominator tree that the sizes will not take go back to
	// the system as the next phase starts, instead of staying resident through it (the
	// immediate dominators stay, with dyn, until the points' sizes are summed).
	if weighed {
		sc.Trim(0)
	} else {
		sc.Trim(dynsize.ComputeArrays)
	}
	freeing("dynamic sizes")
	if !weighed {
		if err := cols.unpark(in, true, false, false); err != nil {
			return nil, err
		}
		dyn.Weigh(g, sc)
	}
	// The walks read the component DAG alone: the shallow sizes and the node → component column
	// wait outside meanwhile, the column read back a node at a time for the few objects ranked.
	cols.park(in, true, false, false)
	cols.forget(Columns{Sizes: opt.Leave.Sizes})
	compOf := func(v uint32) (uint32, error) { return dyn.Comp[v], nil }
	if weighed && points == nil {
		dyn.Points(sc)
	}
	var comps *heapgraph.Spilled[uint32]
	// The column goes out on the other core while the walks, on one, sum the points' sizes:
	// after the points, which the walks wait on.
	spilled := make(chan struct{})
	if opt.Spill {
		comp := dyn.Comp
		dyn.Comp = nil
		go func() {
			defer close(spilled)
			if points != nil {
				<-points
			}
			comps = heapgraph.Spill(comp)
		}()
		compOf = func(v uint32) (uint32, error) { return comps.At(int(v)) }
	} else {
		close(spilled)
	}
	dyn.WalkAndBound(sc)
	<-spilled
	if comps != nil {
		defer comps.Close()
	}
	size := func(v uint32) (uint64, error) {
		c, err := compOf(v)
		if err != nil {
			return 0, fmt.Errorf("leaks: the component of node %d: %w", v, err)
		}
		return dyn.Component(c), nil
	}
	for i := range rep.TopRetained {
		if rep.TopRetained[i].Dynamic, err = size(rep.TopRetained[i].Node); err != nil {
			return nil, err
		}
	}
	for i := range rep.Suspects {
		s := &rep.Suspects[i]
		if s.Dynamic, err = size(s.Node); err != nil {
			return nil, err
		}
		if s.Accumulation.Dynamic, err = size(s.Accumulation.Node); err != nil {
			return nil, err
		}
	}
	top := dyn.Top(opt.Top)
	st := &rep.Stats
	st.Components = dyn.DAG.N() - apart
	st.DAGEdges = dagEdges
	st.BigComponents, st.LargestComp = dyn.BigComponents, dyn.LargestComp
	st.DominatingAPs = dyn.DAP.Count()
	st.DynamicVisited = dyn.Visited
	ranked := make([]uint32, len(top))
	for i, r := range top {
		ranked[i] = r.Comp
	}
	var reps, members []uint32
	if comps != nil {
		// Nothing reads the DAG or the work arrays now: their memory goes back to the system on
		// the other core, without the collection that took 3 ms of the small benchmark dump's
		// run here, while naming the ranked components reads the component column back a part
		// at a time.
		released := make(chan struct{})
		go func() {
			defer close(released)
			dyn.Release()
			sc.Free()
		}()
		// The column's two halves are read on two cores (a node-sized column: on the large
		// benchmark dump, about 50 ms on one).
		d, d2 := dynsize.NewDescriber(ranked), dynsize.NewDescriber(ranked)
		half := comps.Len() / 2
		var halves errgroup.Group
		halves.Go(func() error { return comps.ScanRange(make([]uint32, 16<<10), 0, half, d.Add) })
		halves.Go(func() error { return comps.ScanRange(make([]uint32, 16<<10), half, comps.Len(), d2.Add) })
		err := halves.Wait()
		<-released
		if err != nil {
			return nil, fmt.Errorf("leaks: the component of each node: %w", err)
		}
		d.Merge(d2)
		reps, members = d.Result()
	} else {
		reps, members = dynsize.Describe(dyn.Comp, ranked)
	}
	for i, r := range top {
		rep.TopDynamic = append(rep.TopDynamic, Component{Node: reps[i], Members: members[i], Dynamic: r.Dynamic})
	}
	return rep, nil
}

// Ahead is arrays made for Run ahead of it, by MakeAhead.
type Ahead struct {
	made    chan struct{} // closed once arrays are made (their pages may still be coming in)
	nodes   int
	arrays  [][]uint32   // the depth-first search's first, then the components' search's
	faulted atomic.Int64 // bytes of them faulted in so far
	dropped atomic.Bool  // set when Run does not use them: no more pages come in
}

// dfsArrays is how many node-sized arrays the depth-first search takes (see dominators).
const dfsArrays = 3

// aheadArrays is how many arrays MakeAhead makes at most: the depth-first search's and the
// components' search's first.
const aheadArrays = dfsArrays + 1

// MakeAhead starts making the node-sized arrays that Run's two searches take first, for a graph
// of up to nodes nodes, as many as fit in room bytes of memory once work holding up to
// aheadSlack(nodes) more is done, and has their pages faulted in, on a goroutine of its own. It
// is for a caller with work to do before Run that leaves a core idle (building the graph): the
// searches then start on memory already in place instead of faulting it in as they go, which
// on a virtual machine whose host backs fresh memory anew costs seconds on a dump of tens of
// millions of objects. It returns nil when nothing fits, or there is one core only. Run must
// be given the result (Options.Ahead) for a graph of no more than nodes nodes.
func MakeAhead(nodes int, room int64) *Ahead {
	if runtime.GOMAXPROCS(0) < 2 || nodes <= 0 {
		return nil
	}
	per := 4 * int64(nodes+1)
	k := min(int64(aheadArrays), (room-aheadSlack(nodes))/per)
	if k < 1 {
		return nil
	}
	a := &Ahead{made: make(chan struct{}), nodes: nodes}
	go func() {
		arrays := make([][]uint32, k)
		for i := range arrays {
			arrays[i] = heapgraph.Reserve[uint32](nodes + 1)
		}
		a.arrays = arrays
		close(a.made)
		for _, b := range arrays {
			if a.dropped.Load() || !heapgraph.Populate(b, &a.faulted) {
				return
			}
		}
	}()
	return a
}

// aheadSlack is what building a graph of nodes nodes may take beyond what is resident when it
// starts: its marks and counts over the nodes (under a byte per node on the benchmark's dumps)
// with room to spare. (With 16 MB to spare rather than 4, the small benchmark dump, whose graph
// takes 3 MB to build, had no array made ahead; with one, its search took 1 ms less.)
func aheadSlack(nodes int) int64 { return 4*int64(nodes) + 4<<20 }

// take waits for the arrays and returns them if they fit a graph of n nodes. Arrays too short
// (a caller's mistake) are dropped, and the pages of no other array come in.
func (a *Ahead) take(n int) [][]uint32 {
	<-a.made
	arrays := a.arrays
	a.arrays = nil
	if n > a.nodes {
		a.dropped.Store(true)
		return nil
	}
	return arrays
}

// resident is heapgraph.Resident, which tests replace to choose the room that a memory limit
// leaves.
var resident = heapgraph.Resident

// besideDone, set in tests, learns whether the components' search beside the depth-first search
// found them or gave up.
var besideDone func(found bool)

// searchSlack is how much more than its stacks hold a components' search still running when the
// predecessor lists are made may take.
const searchSlack = 16 << 20

// minStackRoom is the least room for its stacks that the components' search beside the
// depth-first search is started with: a search that is given less gives up on most graphs.
const minStackRoom = 1 << 20

// beside reports whether work needing more bytes may run beside the rest, with resident bytes
// now resident (-1: unknown), under limit.
func beside(resident, more, limit int64) bool {
	return resident >= 0 && resident+more <= limit
}

// parked holds the input's columns that Run moves to temporary files (when on) for phases that
// do not read them. Each column is out or in as a whole; park and unpark take a column that is
// already where it is asked to be as a no-op, so that each phase says only what it needs.
type parked struct {
	on                        bool
	size, classOf, offs, succ column[uint32]
	weak                      column[uint64]
}

// park moves out the shallow sizes, the class column and the edges (offsets, successors and
// weak edges), as asked.
func (p *parked) park(in *Input, size, classOf, edges bool) {
	if !p.on {
		return
	}
	g := in.Graph
	// A column goes back to the system as it goes out (Spilled.Spill), or as its view ends: no
	// collection is needed for that. Where the phase before left arrays behind, the caller
	// collects them; parking the edges beside the dominator tree, a collection here stopped the
	// tree for nothing (0.7 ms on the small benchmark dump, and as much three times more).
	if size {
		p.size.park(&g.Size)
	}
	if classOf {
		p.classOf.park(&in.ClassOf)
	}
	if edges {
		p.offs.park(&g.Off)
		p.succ.park(&g.Succ)
		p.weak.park((*[]uint64)(&in.Weak))
	}
}

// unpark brings back what park moved out, as asked.
func (p *parked) unpark(in *Input, size, classOf, edges bool) error {
	g := in.Graph
	var errs []error
	if size {
		errs = append(errs, p.size.unpark(&g.Size, "shallow sizes"))
	}
	if classOf {
		errs = append(errs, p.classOf.unpark(&in.ClassOf, "class of each object"))
	}
	if edges {
		errs = append(errs, p.offs.unpark(&g.Off, "edge offsets"), p.succ.unpark(&g.Succ, "edges"),
			p.weak.unpark((*[]uint64)(&in.Weak), "weak edges"))
	}
	return errors.Join(errs...)
}

// unparkBut brings back every column but those named in leave, as memory of their own or, with
// views, as views of their files that outlive them.
func (p *parked) unparkBut(in *Input, leave Columns, views bool) error {
	g := in.Graph
	var errs []error
	if leave.Sizes {
		p.size.drop(&g.Size)
	} else {
		errs = append(errs, p.size.own(&g.Size, "shallow sizes", views))
	}
	errs = append(errs, p.classOf.own(&in.ClassOf, "class of each object", views), p.offs.own(&g.Off, "edge offsets", views))
	if leave.Succ {
		p.succ.drop(&g.Succ)
	} else {
		errs = append(errs, p.succ.own(&g.Succ, "edges", views))
	}
	if leave.Weak {
		p.weak.drop((*[]uint64)(&in.Weak))
	} else {
		errs = append(errs, p.weak.own((*[]uint64)(&in.Weak), "weak edges", views))
	}
	return errors.Join(errs...)
}

// forget discards the files of the columns in leave that are out, which the caller must know Run
// reads no more and does not hand back (Options.Leave). The page cache that held one is freed at
// once, in one piece, for the next arrays to take (see heapgraph.GiveCache), rather than when Run
// returns. The edges of the large benchmark dump take 400 MB there.
func (p *parked) forget(leave Columns) {
	if leave.Sizes {
		p.size.forget()
	}
	if leave.Succ {
		p.succ.forget()
	}
	if leave.Weak {
		p.weak.forget()
	}
}

// close discards the files.
func (p *parked) close() {
	p.size.close()
	p.classOf.close()
	p.offs.close()
	p.succ.close()
	p.weak.close()
}

// column is one input column and its copy in a temporary file, written the first time the
// column goes out and kept, so that it goes out again without a second write (Run changes no
// column). Inside Run a column comes back as a view of its file (see heapgraph.Spilled.Map),
// which going out again just unmaps; only what Run hands back to its caller is a copy.
type column[T ~uint32 | ~uint64] struct {
	file *heapgraph.Spilled[T]
	out  bool
	view bool // in, as a view of the file
}

func (c *column[T]) park(a *[]T) {
	if c.out || *a == nil {
		return
	}
	if c.file == nil {
		c.file = heapgraph.Spill(*a)
	}
	if c.view {
		c.file.Unmap()
		c.view = false
	}
	*a, c.out = nil, true
}

func (c *column[T]) unpark(a *[]T, what string) error {
	if !c.out {
		return nil
	}
	if c.file == nil {
		return fmt.Errorf("leaks: the %s: asked for after they were let go", what)
	}
	v, err := c.file.Map()
	if err != nil {
		return fmt.Errorf("leaks: the %s: %w", what, err)
	}
	*a, c.out, c.view = v, false, true
	return nil
}

// own brings the column back, for Run's caller, as memory of its own rather than a view of a
// file that Run is about to close; with view, as a view of the file that outlives it
// (Options.Views).
func (c *column[T]) own(a *[]T, what string, view bool) error {
	if !c.out && !c.view {
		return nil
	}
	if c.file == nil {
		return fmt.Errorf("leaks: the %s: asked for after they were let go", what)
	}
	var v []T
	var err error
	if view {
		c.file.Unmap()
		v, err = c.file.View()
		c.file = nil
	} else {
		v, err = c.file.Load(nil)
		c.file.Unmap()
	}
	if err != nil {
		return fmt.Errorf("leaks: the %s: %w", what, err)
	}
	*a, c.out, c.view = v, false, false
	return nil
}

// forget closes the file of a column that is out, and stays out: a column in (or never parked)
// is left as it is.
func (c *column[T]) forget() {
	if c.out && c.file != nil {
		c.file.Close()
		c.file = nil
	}
}

// drop leaves the column out for good: nil in the caller's hands, not a view of a closed file.
func (c *column[T]) drop(a *[]T) {
	if c.view {
		c.file.Unmap()
		*a, c.view = nil, false
	}
}

func (c *column[T]) close() {
	if c.file != nil {
		c.file.Close()
	}
}

// groupsHeld keeps, per dimension, the groups that have members, largest retained first.
func groupsHeld(dims [][]dominators.GroupRetained) [][]dominators.GroupRetained {
	for d, groups := range dims {
		kept := groups[:0]
		for _, o := range groups {
			if o.Members > 0 {
				kept = append(kept, o)
			}
		}
		sort.SliceStable(kept, func(i, j int) bool { return kept[i].Retained > kept[j].Retained })
		dims[d] = kept
	}
	return dims
}

// leaveApart has dynamic sizes leave the components of the nodes in apart out of their ranking,
// and returns how many there are: one node each (see Input.Apart).
func leaveApart(dyn *dynsize.Sizes, apart heapgraph.EdgeSet) int {
	if apart == nil {
		return 0
	}
	n := 0
	dyn.Leave = dynsize.NewSet(dyn.DAG.N())
	for w, word := range apart {
		for ; word != 0; word &= word - 1 {
			v := w<<6 | bits.TrailingZeros64(word)
			if v < len(dyn.Comp) {
				dyn.Leave.Add(dyn.Comp[v])
				n++
			}
		}
	}
	return n
}

// accumulationPoint follows the dominator tree down from v to the biggest child while that child
// retains at least ratio of its parent: where the retained size stops being held by one chain,
// the memory has accumulated (in a collection's array, say).
//
// A linked structure (a hand-made list, Clojure's LazySeq and Cons cells, Scala's :: or Stream
// cells, a degenerate tree) defeats that rule: every element holds the rest, and each step leaves
// only its element's share of the memory behind, so the descent runs to near the tail, where the
// drop finally comes, and names an element retaining almost nothing. With classes known, the descent
// therefore treats a chain of objects whose classes recur every few steps (see chains) as one
// object: once an element of it retains less than ratio of the chain's head, the chain itself
// held the memory, spread along it, and its head, which retains the whole structure, is the
// accumulation point. A chain that carries most of its head's memory to its end (wrappers
// around the structure, a list of lists of which one is big) is passed through as before.
func accumulationPoint(v uint32, ret []uint64, off, kids []uint32, ratio float64, classOf []uint32) uint32 {
	var chain chains
	for depth := 0; ; depth++ {
		if classOf != nil {
			if head, ok := chain.add(depth, v, classOf); ok && float64(ret[v]) < ratio*float64(ret[head]) {
				return head
			}
		}
		best, found := uint32(0), false
		for _, k := range kids[off[v]:off[v+1]] {
			if !found || ret[k] > ret[best] {
				best, found = k, true
			}
		}
		if !found || float64(ret[best]) < ratio*float64(ret[v]) {
			return v
		}
		v = best
	}
}

// chainWindow is how far back along a descent accumulationPoint looks for an object's class to
// take it for an element of a linked structure: 1 for a list of one node class, 2 for cells that
// alternate (Clojure's LazySeq and Cons or ChunkedCons, Scala 2.13's LazyList and its State), 3
// for a node holding the next through a collection (an ArrayList and its Object[]), 4 through a
// map's entry. Further back, mere recursion between unrelated objects would pass for a chain.
const chainWindow = 4

// chains follows the classes of the objects along a descent to find the chains in it. An
// object whose class is among the chainWindow objects above it links the two; a chain is a run
// of links that overlap, so its cells need not repeat one fixed pattern (Clojure's concat and
// map mix Cons and ChunkedCons cells between the LazySeqs), and a new class may join on the way.
type chains struct {
	// last[d%chainWindow] is the object at depth d, for the last chainWindow depths.
	last [chainWindow]uint32
	on   bool
	head uint32 // the first object of the latest chain
	end  int    // the depth of its last linked object
}

// add records v, at depth d of the descent, and returns the head of the chain that v links into,
// if it does.
func (c *chains) add(d int, v uint32, classOf []uint32) (head uint32, ok bool) {
	// The earliest object of v's class above it: a chain found here begins as high as it can.
	back := 0
	for p := min(d, chainWindow); p > 0 && back == 0; p-- {
		if classOf[c.last[(d-p)%chainWindow]] == classOf[v] {
			back = p
		}
	}
	if back > 0 && (!c.on || d-back > c.end) {
		c.on, c.head = true, c.last[(d-back)%chainWindow]
	}
	c.last[d%chainWindow] = v // after reading the slot, which at back == chainWindow is this one
	if back == 0 {
		return 0, false
	}
	c.end = d
	return c.head, true
}

// shortestPaths runs a breadth-first search from the super root over strong references, until
// it has reached every target, and returns the path to each.
// via and queue are work arrays of g.N() elements (the queue takes every node at most once).
func shortestPaths(g *heapgraph.Graph, weak heapgraph.EdgeSet, targets []uint32, via, queue []uint32) map[uint32][]Step {
	// via[v] is the edge the search first reached v by; NoNode while unreached.
	for i := range via {
		via[i] = heapgraph.NoNode
	}
	left := map[uint32]bool{}
	for _, t := range targets {
		if t != 0 {
			left[t] = true
		}
	}
	// Every node enters the queue at most once.
	queue = append(queue[:0], 0)
	for head := 0; head < len(queue) && len(left) > 0; head++ {
		x := queue[head]
		for e := g.Off[x]; e < g.Off[x+1]; e++ {
			if y := g.Succ[e]; !weak.Has(e) && y != 0 && via[y] == heapgraph.NoNode {
				via[y] = e
				queue = append(queue, y)
				delete(left, y)
			}
		}
	}
	queue = nil
	edgeFrom := func(e uint32) uint32 {
		// The source of edge e is the node whose range of Succ holds e.
		return uint32(sort.Search(g.N(), func(n int) bool { return g.Off[n+1] > e }))
	}
	paths := map[uint32][]Step{}
	for _, t := range targets {
		if t == 0 || via[t] == heapgraph.NoNode {
			continue
		}
		var path []Step
		for v := t; v != 0; v = edgeFrom(via[v]) {
			path = append(path, Step{Edge: via[v], Node: v})
		}
		for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
			path[i], path[j] = path[j], path[i]
		}
		paths[t] = path
	}
	return paths
}

// dynamicSkip is the set of edges dynamic sizes leave out: weak referents and references into
// class objects.
func dynamicSkip(g *heapgraph.Graph, weak, classObjects heapgraph.EdgeSet) heapgraph.EdgeSet {
	skip := heapgraph.NewEdgeSet(len(g.Succ))
	copy(skip, weak)
	if len(classObjects) > 0 {
		for e, w := range g.Succ[g.Off[1]:] {
			if w>>6 < uint32(len(classObjects)) && classObjects.Has(w) {
				skip.Add(g.Off[1] + uint32(e))
			}
		}
	}
	return skip
}

// topBy returns up to k nodes with the largest values, largest first (ties to the lower node),
// among those keep accepts, in one pass with a k-element heap (on a large heap, one per half of
// the nodes, on two cores).
func topBy(val []uint64, k int, keep func(uint32) bool) []uint32 {
	if len(val) < 1<<20 || runtime.GOMAXPROCS(0) < 2 {
		return topIn(val, 0, len(val), k, keep)
	}
	// Each core ranks half the nodes; the best k of the two rankings are the best k of all.
	var a, b []uint32
	mid := len(val) / 2
	heapgraph.Both(func() { a = topIn(val, 0, mid, k, keep) }, func() { b = topIn(val, mid, len(val), k, keep) })
	h := &minHeap{val: val}
	out := make([]uint32, 0, min(k, len(a)+len(b)))
	for len(out) < cap(out) {
		if len(b) == 0 || (len(a) > 0 && h.less(b[0], a[0])) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// topIn is topBy over the nodes from lo up to hi.
func topIn(val []uint64, lo, hi, k int, keep func(uint32) bool) []uint32 {
	if k <= 0 {
		return nil
	}
	h := &minHeap{val: val}
	// Once the heap is full a node must beat its worst: nodes come in increasing order, so a tie
	// loses (the lower node ranks first), and most nodes fail on one comparison, before keep,
	// a call through a closure, is asked (the small benchmark dump's suspects: 3 ms to 1).
	floor := uint64(0) // values at or below it cannot enter
	for v := lo; v < hi; v++ {
		if val[v] <= floor || !keep(uint32(v)) {
			continue
		}
		if h.Len() < k {
			heap.Push(h, uint32(v))
			if h.Len() == k {
				floor = val[h.nodes[0]]
			}
			continue
		}
		h.nodes[0] = uint32(v)
		heap.Fix(h, 0)
		floor = val[h.nodes[0]]
	}
	out := make([]uint32, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(uint32)
	}
	return out
}

// minHeap keeps the k best nodes seen so far with the worst on top.
type minHeap struct {
	val   []uint64
	nodes []uint32
}

// less orders a before b when a ranks lower: a smaller value, or at equal values a higher node.
func (h *minHeap) less(a, b uint32) bool {
	if h.val[a] != h.val[b] {
		return h.val[a] < h.val[b]
	}
	return a > b
}
func (h *minHeap) Len() int           { return len(h.nodes) }
func (h *minHeap) Less(i, j int) bool { return h.less(h.nodes[i], h.nodes[j]) }
func (h *minHeap) Swap(i, j int)      { h.nodes[i], h.nodes[j] = h.nodes[j], h.nodes[i] }
func (h *minHeap) Push(x any)         { h.nodes = append(h.nodes, x.(uint32)) }
func (h *minHeap) Pop() any {
	x := h.nodes[len(h.nodes)-1]
	h.nodes = h.nodes[:len(h.nodes)-1]
	return x
}
