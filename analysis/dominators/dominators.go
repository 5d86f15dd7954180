// Package dominators computes the dominator tree of a heap graph rooted at its super root, the
// retained ("garbage collector") size of every object, and retained sizes grouped by class.
//
// The dominator tree comes from the SEMI-NCA algorithm (Georgiadis' simplification of
// Lengauer–Tarjan: semidominators by path-compressed evaluation, then immediate dominators as
// nearest common ancestors in the DFS tree). Everything is iterative — a Java heap holds linked
// lists millions of elements long, which would overflow any recursion — and works on flat uint32
// arrays indexed by DFS preorder number, so the cost is a few words per object and no per-object
// allocation.
package dominators

import (
	"fmt"
	"math/bits"
	"runtime"
	"sort"
	"sync/atomic"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/cores"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// Tree is the dominator tree of the part of a graph reachable from node 0.
type Tree struct {
	// Idom is the immediate dominator of each node; heapgraph.NoNode for node 0 and for nodes
	// that node 0 does not reach.
	Idom []uint32
	// Order lists the reachable nodes in DFS preorder, starting with node 0. A node's dominators
	// all come before it, so walking Order backwards visits every dominator-tree child before its
	// parent: the bottom-up passes (retained size) need no recursion and no child lists.
	Order []uint32

	childOff, kids []uint32 // child lists, built on first use
	sc             *memory.Scratch
}

// Compute builds the dominator tree of g from node 0, leaving out the edges in skip (nil for
// none).
func Compute(g *heapgraph.Graph, skip heapgraph.EdgeSet) *Tree {
	t, err := ComputeWith(g, skip, nil)
	if err != nil {
		panic(err) // without a Scratch nothing is spilled, and nothing else can fail
	}
	return t
}

// ComputeWith is Compute taking its work arrays from sc and giving them back to it; the tree's
// own arrays go back with Release. It fails only when sc spills (see memory.Scratch.Spill)
// and a spilled array cannot be read back.
func ComputeWith(g *heapgraph.Graph, skip heapgraph.EdgeSet, sc *memory.Scratch) (*Tree, error) {
	return Search(g, skip, sc).Finish()
}

// Searched is a dominator tree half built by Search: the depth-first search is done and the
// predecessor lists are made, so g's edges are not read again. A caller short of memory can move
// them out before Finish, which needs only the arrays held here.
type Searched struct {
	sc      *memory.Scratch
	n, r    uint32
	parent  []uint32 // DFS-tree parent, by preorder number
	isRoot  []uint64 // a bit per node the root refers to
	roff    []uint32 // the predecessor lists are preds[roff[t]:roff[t+1]]
	preds   []uint32
	pre     []uint32                // node → preorder number; its array becomes the ancestors
	vertex  []uint32                // preorder number → node, unless spilled
	spilled *memory.Spilled[uint32] // vertex, when sc spills
	tree    heapgraph.EdgeSet       // from DepthFirst to ListPredecessors: the DFS tree's edges
}

// Search does the first half of ComputeWith: the depth-first search from node 0, leaving out the
// edges in skip, and the predecessor lists by preorder number.
func Search(g *heapgraph.Graph, skip heapgraph.EdgeSet, sc *memory.Scratch) *Searched {
	s := DepthFirst(g, skip, sc)
	s.ListPredecessors(g, skip, true)
	return s
}

// DepthFirst is the first step of Search, the depth-first search alone (one core: a search's
// order cannot be split), apart so that its time can be shown on its own: every step after it
// depends on the order it finds. ListPredecessors must follow, with the same g and skip.
func DepthFirst(g *heapgraph.Graph, skip heapgraph.EdgeSet, sc *memory.Scratch) *Searched {
	n := g.N()
	const none = heapgraph.NoNode

	pre := sc.Uint32s(n) // node → DFS preorder number
	for i := range pre {
		pre[i] = none
	}
	// Arrays of n+1 elements, so that the predecessor offsets can take any of them.
	vertex := sc.Uint32s(n + 1)[:0] // preorder number → node
	parent := sc.Uint32s(n + 1)
	// The open nodes' next edges wait on a stack of their own, as deep as the search's path,
	// rather than in an array by preorder number: that took a word per node of fresh memory
	// in the phase where the components' search takes its own beside (180 MB on a dump of 45
	// million objects), for the few nodes open at once. The search climbs back through parent.
	var next memory.Stack[uint32]
	// The edges the search descends by, which ListPredecessors leaves out: marked here, a bit
	// read in edge order there saves looking up each edge's target's parent, at random.
	tree := heapgraph.EdgeSet(sc.Uint64s((len(g.Succ) + 63) / 64))
	pre[0] = 0
	vertex = append(vertex, 0)
	next.Push(g.Off[0])
	for cur := uint32(0); ; {
		v := vertex[cur]
		end := g.Off[v+1]
		at := next.Top()
		e := *at
		for ; e < end; e++ {
			if !skip.Has(e) && pre[g.Succ[e]] == none {
				break
			}
		}
		if e < end {
			*at = e + 1
			tree.Add(e)
			w := g.Succ[e]
			k := uint32(len(vertex))
			pre[w] = k
			vertex = append(vertex, w)
			parent[k] = cur
			// w's edges up to the first that leads somewhere new are passed over now: a node
			// whose edges all lead to nodes visited already (an array of primitives, an object
			// whose references point back, or only to its class) is done without a frame.
			we, wend := g.Off[w], g.Off[w+1]
			for ; we < wend; we++ {
				if !skip.Has(we) && pre[g.Succ[we]] == none {
					break
				}
			}
			if we < wend {
				next.Push(we)
				cur = k
			}
			continue
		}
		next.Pop()
		if cur == 0 {
			break
		}
		cur = parent[cur]
	}
	r := uint32(len(vertex))
	return &Searched{sc: sc, n: uint32(n), r: r, parent: parent[:r], pre: pre, vertex: vertex[:r], tree: tree}
}

// ListPredecessors is the second step of Search: the predecessor lists by preorder number. With
// split, and two cores, each core lists the edges of half the sources, counting into an array of
// its own: a node-sized array more, held through the step, that a caller short of memory leaves
// out; one core then lists them all.
func (s *Searched) ListPredecessors(g *heapgraph.Graph, skip heapgraph.EdgeSet, split bool) {
	s.ListPredecessorsKeeping(g, skip, split, false)
}

// ListPredecessorsKeeping is ListPredecessors for a Scratch that spills: with keep, the preorder
// stays in memory through the rest of the tree, a word per node more, rather than going out to
// a temporary file and back; a caller that has the room saves writing and reading it (the one
// core's time, and the pages of the file's cache).
func (s *Searched) ListPredecessorsKeeping(g *heapgraph.Graph, skip heapgraph.EdgeSet, split, keep bool) {
	sc, n, r, pre, tree := s.sc, int(s.n), s.r, s.pre, s.tree
	s.tree = nil
	// The semidominator loop needs neither map between nodes and preorder numbers. With a
	// Scratch that spills, the node of each number (the preorder, which the tree keeps) waits in
	// a temporary file from here until the end.
	if sc.Spills() && !keep {
		// Its memory goes back to the system as it is written out, rather than to sc, which
		// would keep it resident through the predecessor lists. (A collection here freed nothing
		// more, and cost time.)
		s.spilled, s.vertex = memory.Spill(sc.Memory(), s.vertex), nil
	}

	// A node the root refers to has the root as its semidominator whatever else refers to it,
	// so its other predecessors are not listed. Those are the GC roots, which in a heap dump
	// include the classes of the boot class path: the edge from every instance to its class
	// would otherwise fill the largest lists.
	isRoot := make([]uint64, (n+63)/64)
	for e := g.Off[0]; e < g.Off[1]; e++ {
		if !skip.Has(e) {
			w := g.Succ[e]
			isRoot[w>>6] |= 1 << (w & 63)
		}
	}

	// Predecessor lists by preorder number, covering just the reachable part. They leave out the
	// DFS tree's edges — a node's semidominator starts at its parent anyway — and
	// self-references and references to the root, which cannot lower a semidominator: most heap
	// objects have one referrer, so most lists are empty. (Another edge from the parent to the
	// same node is listed, and changes nothing.) The lists are counted, then filled; the running
	// sums make roff[t] the end of t's list, and each predecessor is placed in front of those
	// placed before it, which leaves roff[t] at the list's start with no cursor array.
	//
	// Split between two cores, the edges go by their sources, and the second core's counts and
	// cursors are an array of its own: the instances of a class all refer to its class object,
	// whose count both cores would otherwise share. (Shared through atomic operations they cost
	// more than one core alone; split by the lists' nodes instead, each core read every edge to
	// find its half, and a branch on a random bit per edge cost as much as the listing: two
	// cores so took longer to count the lists than one core alone.)
	// The offsets take the memory the preorder just gave back, when it went out; n+1 elements,
	// as Finish hands them on to the tree's node-indexed result.
	roff := sc.Uint32s(n + 1)[:r+1]
	// The edges the lists leave out for what they are (the tree's, and those skipped) go into
	// one bit set, the tree's: the lists then pass over them a word at a time, and test each
	// edge left once. Nearly half the edges are the tree's.
	for i, w := range skip[:min(len(skip), len(tree))] {
		tree[i] |= w
	}
	lists := predLister{g: g, passed: tree, pre: pre, isRoot: isRoot}
	var preds []uint32
	if split && runtime.GOMAXPROCS(0) >= 2 {
		// The sources go in runs of about equal numbers of edges, taken by the cores as they
		// come free: halves left one core much more work than the other, with as many edges
		// listed in each; the cost per edge is the cache's. Each core places the runs it counted.
		const runs = 32
		bounds := make([]int, runs+1)
		for i := range bounds {
			bounds[i] = sort.Search(n, func(v int) bool { return uint64(g.Off[v])*runs >= uint64(g.Off[n])*uint64(i) })
		}
		bounds[runs] = n
		var mine [runs]bool // the runs the first core took
		var next atomic.Int32
		other := sc.Uint32s(int(r))
		take := func(first bool, count counter) {
			for i := int(next.Add(1) - 1); i < runs; i = int(next.Add(1) - 1) {
				mine[i] = first
				listEdges(&lists, bounds[i], bounds[i+1], count)
			}
		}
		cores.Both(func() { take(true, counter{roff}) }, func() { take(false, counter{other}) })
		place := func(first bool, p placer) {
			for i := range runs {
				if mine[i] == first {
					listEdges(&lists, bounds[i], bounds[i+1], p)
				}
			}
		}
		// The first core's share of each list comes last: its cursor starts at the list's end,
		// the second's where the first's share begins.
		total := uint32(0)
		for t := range r {
			c0 := roff[t]
			total += c0 + other[t]
			roff[t], other[t] = total, total-c0
		}
		preds = sc.Uint32s(int(total))
		cores.Both(func() { place(true, placer{roff, preds}) }, func() { place(false, placer{other, preds}) })
		copy(roff, other) // the starts
		roff[r] = total
		sc.Release(other)
	} else {
		listEdges(&lists, 0, n, counter{roff})
		for t := uint32(1); t < r; t++ {
			roff[t] += roff[t-1]
		}
		roff[r] = roff[r-1]
		preds = sc.Uint32s(int(roff[r]))
		listEdges(&lists, 0, n, placer{roff, preds})
	}
	sc.Release64(tree)
	s.roff, s.preds, s.isRoot = roff, preds, isRoot
}

// predLister holds what deciding which edges go into the predecessor lists reads.
type predLister struct {
	g      *heapgraph.Graph
	passed heapgraph.EdgeSet // the DFS tree's edges and the skipped ones
	pre    []uint32
	isRoot []uint64
}

// predSink takes the listed edges as (t, o): an edge from the node of preorder number o into t's
// list. The sinks are value types of different shapes, so that listEdges is compiled once for
// each, with the call inlined, rather than called through a func value on every edge.
type predSink interface{ put(t, o uint32) }

// counter counts each list's length.
type counter struct{ roff []uint32 }

func (c counter) put(t, _ uint32) { c.roff[t]++ }

// placer places each predecessor in front of those placed before it in its list.
type placer struct{ roff, preds []uint32 }

func (p placer) put(t, o uint32) { p.roff[t]--; p.preds[p.roff[t]] = o }

// listEdges gives sink the edges from the nodes in [from, to) that the predecessor lists take
// (see ListPredecessors), in the order of their sources.
func listEdges[S predSink](l *predLister, from, to int, sink S) {
	const none = heapgraph.NoNode
	off, succ, pre, isRoot, passed := l.g.Off, l.g.Succ, l.pre, l.isRoot, l.passed
	lo, hi := off[from], off[to]
	if lo == hi {
		return
	}
	// The edges are visited in order, a word of the passed set at a time; the source follows,
	// from node to node.
	v := from
	end, o := off[v+1], pre[v]
	for k := lo >> 6; k <= (hi-1)>>6; k++ {
		word := ^passed[k]
		if k == lo>>6 {
			word &= ^uint64(0) << (lo & 63)
		}
		if k == (hi-1)>>6 {
			word &= ^uint64(0) >> (63 - (hi-1)&63)
		}
		for ; word != 0; word &= word - 1 {
			e := k<<6 | uint32(bits.TrailingZeros64(word))
			for e >= end {
				v++
				end, o = off[v+1], pre[v]
			}
			if o == none {
				continue
			}
			w := succ[e]
			if isRoot[w>>6]&(1<<(w&63)) != 0 {
				continue
			}
			if t := pre[w]; t != 0 && t != o {
				sink.put(t, o)
			}
		}
	}
}

// Finish does the second half of ComputeWith: semidominators, then immediate dominators.
func (s *Searched) Finish() (*Tree, error) {
	const none = heapgraph.NoNode
	sc, r, parent, roff, preds, pre := s.sc, s.r, s.parent, s.roff, s.preds, s.pre
	// The semidominators start at the parents, made here rather than in Search so that their
	// array does not stack on g's edges.
	semi := sc.Uint32s(int(r))
	for o := uint32(1); o < r; o++ {
		semi[o] = parent[o]
	}
	for w, word := range s.isRoot {
		for ; word != 0; word &= word - 1 {
			if t := pre[w<<6|bits.TrailingZeros64(word)]; t != none {
				semi[t] = 0 // see isRoot in Search
			}
		}
	}
	// Path compression keeps, for each node linked into the forest, the lowest semidominator on
	// its compressed path rather than the node that has it (Lengauer and Tarjan's label): SEMI-NCA
	// needs only the value, and keeping it saves reading the semidominator of each label, a
	// random read more per step. The values live in the predecessor offsets' array, a slot up:
	// low[v] is read only once v is processed (linked into the forest), and the offset at v+1 is
	// read last when v is, and v+1 before it. A separate array was a word per node of fresh
	// memory in the serial part of the phase (180 MB on a dump of 45 million objects).
	low := roff[1:]
	ancestor := pre[:r]
	for o := uint32(0); o < r; o++ {
		ancestor[o] = none
	}
	var path []uint32
	for w := r - 1; w > 0; w-- {
		sw := semi[w]
		for _, v := range preds[roff[w]:roff[w+1]] {
			if v < w {
				sw = min(sw, v)
				continue
			}
			// v was processed before w and is linked into the forest: evaluate it, compressing
			// the path iteratively (the recursive textbook version would be millions deep).
			if ancestor[ancestor[v]] != none {
				path = path[:0]
				for u := v; ancestor[ancestor[u]] != none; u = ancestor[u] {
					path = append(path, u)
				}
				for i := len(path) - 1; i >= 0; i-- {
					x := path[i]
					a := ancestor[x]
					low[x] = min(low[x], low[a])
					ancestor[x] = ancestor[a]
				}
			}
			sw = min(sw, low[v])
			if sw == 0 {
				// Nothing is lower than the root. A class object, which every instance of its
				// class refers to, has a list of millions, and most of the loop's time went on
				// evaluating them after the root had turned up.
				break
			}
		}
		semi[w] = sw
		ancestor[w] = parent[w]
		low[w] = sw // its list's end is read no more
	}
	sc.Release(preds)

	// The immediate dominator is the nearest ancestor in the DFS tree at or above the
	// semidominator, found by climbing the already-final dominators of earlier nodes.
	idom := ancestor
	idom[0] = none
	for w := uint32(1); w < r; w++ {
		x := parent[w]
		for x > semi[w] {
			x = idom[x]
		}
		idom[w] = x
	}
	sc.Release(semi)
	order := s.vertex
	if s.spilled != nil {
		// Back into the parents' array, done with.
		var err error
		if order, err = s.spilled.Restore(parent); err != nil {
			return nil, fmt.Errorf("dominators: the preorder of %d nodes: %w", r, err)
		}
	} else {
		sc.Release(parent)
	}
	// The node-indexed result takes the predecessor offsets' array: filled in two halves of the
	// preorder on two cores (the preorder writes each node once), rather than on one while the
	// other core idles.
	byNode := roff[:s.n]
	for i := range byNode {
		byNode[i] = none
	}
	fill := func(from, to uint32) {
		for o := from; o < to; o++ {
			byNode[order[o]] = order[idom[o]]
		}
	}
	if mid := r / 2; runtime.GOMAXPROCS(0) >= 2 && r >= 1<<16 {
		cores.Both(func() { fill(1, mid) }, func() { fill(mid, r) })
	} else {
		fill(1, r)
	}
	sc.Release(idom)
	*s = Searched{}
	return &Tree{Idom: byNode, Order: order, sc: sc}, nil
}

// Release gives the tree's arrays back to the Scratch it was computed with; the tree must not be
// used afterwards.
func (t *Tree) Release() {
	t.sc.Release(t.Idom, t.Order, t.childOff, t.kids)
	*t = Tree{}
}

// Reachable reports whether node n is reachable from node 0 (and so has a place in the tree).
func (t *Tree) Reachable(n uint32) bool { return n == 0 || t.Idom[n] != heapgraph.NoNode }

// Retained returns the retained size of every node of g: its own shallow size plus that of every node
// it dominates, i.e. what the garbage collector would free if the node were unreachable. Nodes
// that node 0 does not reach get 0; node 0 gets the total of the reachable heap.
func (t *Tree) Retained(g *heapgraph.Graph) []uint64 {
	ret := t.sc.Uint64s(len(t.Idom)) // the Scratch the tree came from, if any
	// Every reachable node starts with its own size, set in node order: three arrays streamed
	// rather than two read and one written at random in preorder.
	if len(t.Order) > 0 {
		ret[0] = g.SizeOf(0)
	}
	for v, d := range t.Idom {
		if d != heapgraph.NoNode {
			ret[v] = g.SizeOf(uint32(v))
		}
	}
	for i := len(t.Order) - 1; i > 0; i-- {
		v := t.Order[i]
		ret[t.Idom[v]] += ret[v]
	}
	return ret
}

// Children returns the dominator tree as child lists in CSR form: the children of n are
// kids[off[n]:off[n+1]], in DFS preorder. They are built once and kept; the slices must not be
// changed.
func (t *Tree) Children() (off, kids []uint32) {
	if t.childOff == nil {
		t.childOff, t.kids = t.children()
	}
	return t.childOff, t.kids
}

func (t *Tree) children() (off, kids []uint32) {
	n := len(t.Idom)
	// off[d] counts d's children, then the running sums make it the end of d's list; placing
	// the children from the last in preorder, each in front of those placed before it, leaves
	// every list in preorder and off[d] at its start, with no cursor array.
	off = t.sc.Uint32s(n + 1)
	// Counted in node order, the immediate dominators read in a stream rather than at random.
	for _, d := range t.Idom {
		if d != heapgraph.NoNode {
			off[d]++
		}
	}
	for i := 1; i < n; i++ {
		off[i] += off[i-1]
	}
	off[n] = uint32(len(t.Order) - 1)
	kids = t.sc.Uint32s(len(t.Order) - 1)
	for i := len(t.Order) - 1; i > 0; i-- {
		v := t.Order[i]
		d := t.Idom[v]
		off[d]--
		kids[off[d]] = v
	}
	return off, kids
}

// ReleaseNodes gives the immediate dominators and the preorder back to the Scratch the tree was
// computed with, keeping the child lists (which it builds if they are not yet), so that the
// phases that need only those and the retained sizes run with two node-sized arrays less.
// Afterwards only Children, ByClass and Release may be used.
func (t *Tree) ReleaseNodes() {
	t.Children()
	t.sc.Release(t.Idom, t.Order)
	t.Idom, t.Order = nil, nil
}
