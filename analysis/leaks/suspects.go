package leaks

import (
	"container/heap"
	"runtime"
	"sort"

	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/dynsize"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/cores"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// Suspects is the third step: the leak suspects and their accumulation points, the top objects
// by retained size, retained size by class and by label, and the shortest strong paths to the
// suspects.
//
//  1. The classes come back beside the sizes: the top objects, then the suspects (findSuspects).
//  2. Retained size by class; by label, the heap's and below each suspect, on the two cores.
//  3. The retained sizes and the tree go; the edges come back, the sizes and classes go out.
//  4. A breadth-first search from the super root over strong references to every suspect and
//     accumulation point (shortestPaths).
func (a *Analysis) Suspects() error {
	if err := a.begin("suspects", "leak suspects"); err != nil {
		return err
	}
	if err := a.cols.In(colClassOf); err != nil {
		return err
	}
	g, in, rep, ret := a.g, a.in, a.rep, a.ret
	for _, v := range topBy(ret, a.opt.Top, func(v uint32) bool { return v != 0 }) {
		rep.TopRetained = append(rep.TopRetained, Object{Node: v, Shallow: g.SizeOf(v), Retained: ret[v]})
	}
	a.findSuspects()
	if err := a.begin("suspects", "retained size by class"); err != nil {
		return err
	}
	if in.ClassOf != nil {
		byClass := a.tree.ByClass(g, ret, in.ClassOf, in.NumClasses)
		sort.SliceStable(byClass, func(i, j int) bool { return byClass[i].Retained > byClass[j].Retained })
		for len(byClass) > 0 && byClass[len(byClass)-1].Instances == 0 {
			byClass = byClass[:len(byClass)-1]
		}
		rep.ByClass = byClass[:min(len(byClass), a.opt.Top)]
	}
	if in.Labels != nil {
		if err := a.begin("suspects", "retained size by label"); err != nil {
			return err
		}
		a.byLabel()
	}
	// Neither the retained sizes nor the tree are needed again; the rest of the analysis reads
	// the edges, and the sizes only once the components are condensed.
	memory.Release(a.opt.Memory, ret)
	a.ret = nil
	a.tree.Release()
	a.tree = nil
	a.sc.Trim(2)
	if err := a.cols.Out(colSizes, colClassOf); err != nil {
		return err
	}
	if err := a.cols.In(edgeColumns...); err != nil {
		return err
	}
	return a.paths()
}

// findSuspects finds the suspects and their accumulation points. Retained sizes only shrink down
// the dominator tree, so the objects over the threshold form a subtree below the super root.
// Its top objects are suspects, and so are the objects over the threshold below a split, where
// two or more children are over it: one object holding two big collections should name both,
// not stop at the holder for want of a single big child.
func (a *Analysis) findSuspects() {
	g, ret, rep := a.g, a.ret, a.rep
	total := ret[0]
	limit := a.opt.Threshold * float64(total)
	off, kids := a.tree.Children()
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
				p := accumulationPoint(k, ret, off, kids, a.opt.DropRatio, a.in.ClassOf)
				s.Accumulation = Object{Node: p, Shallow: g.SizeOf(p), Retained: ret[p]}
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
}

// byLabel sums the labelled objects' retained sizes per group: the heap's walk on one core, the
// suspects' on the other (below a suspect that holds most of the heap, its walk is about as
// long).
func (a *Analysis) byLabel() {
	g, ret, in, rep, tree := a.g, a.ret, a.in, a.rep, a.tree
	cores.Both(func() { rep.ByLabel = groupsHeld(tree.ByLabel(g, ret, in.Labels, 0, in.ClassOf)) }, func() {
		for i := range rep.Suspects {
			s := &rep.Suspects[i]
			s.Held = groupsHeld(tree.ByLabel(g, ret, in.Labels, s.Accumulation.Node, in.ClassOf))
		}
	})
}

// paths finds the shortest strong path from a GC root to every suspect and accumulation point.
func (a *Analysis) paths() error {
	if err := a.begin("suspects", "paths from GC roots"); err != nil {
		return err
	}
	var targets []uint32
	for _, s := range a.rep.Suspects {
		targets = append(targets, s.Node, s.Accumulation.Node)
	}
	via, queue := a.sc.Uint32s(a.n), a.sc.Uint32s(a.n)
	paths := shortestPaths(a.g, a.in.Weak, targets, via, queue)
	a.sc.Release(via, queue)
	// Only what the dynamic sizes will use stays; the rest goes back to the system as the next
	// step starts.
	a.sc.Trim(dynsize.WorkArrays)
	for i := range a.rep.Suspects {
		s := &a.rep.Suspects[i]
		s.Path, s.AccumulationPath = paths[s.Node], paths[s.Accumulation.Node]
	}
	return nil
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
	cores.Both(func() { a = topIn(val, 0, mid, k, keep) }, func() { b = topIn(val, mid, len(val), k, keep) })
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
	// a call through a closure, is asked.
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
