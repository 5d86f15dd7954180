// Package dynsize computes dynamic sizes as the dynaTrace thesis defines them: the shallow size
// of an object plus that of every object reachable from it. Computing it for every object by
// walking from each one is quadratic, so, as in the thesis, the graph is first condensed into
// its strongly connected components (all members share one dynamic size), the condensed DAG is
// given a dominator tree, and the dominating articulation points of Listing 4.4 — components that
// dominate everything they reach — get their dynamic size once, bottom-up. A walk from any other
// component then stops at the first dominating articulation point it meets and adds that
// point's size, which cannot double count because nothing below the point is reachable except
// through it (unlike plain articulation points: the thesis's Figure 4.11).
package dynsize

import (
	"math/bits"

	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// Components labels each node with its strongly connected component, leaving out the edges in
// skip. Components are numbered in topological order: component 0 holds node 0 and every edge between two components goes from a smaller number to a
// larger one. Every node gets a component, also nodes that node 0 does not reach (an object
// reached only through a skipped edge still has a dynamic size). count is the number of
// components.
//
// This is Tarjan's algorithm in Pearce's one-array form, run with an explicit stack of frames:
// while a node is open its entry holds its DFS lowlink; once its component is complete the entry
// holds a value counting down from the top of the uint32 range, which every open lowlink is below.
// Node 0 is searched from last, so that its component completes last and is numbered 0.
func Components(g *heapgraph.Graph, skip heapgraph.EdgeSet) (comp []uint32, count int) {
	comp, count, _ = components(g, skip, nil)
	return comp, count
}

// components is Components that also marks, in entered, every node that an edge (outside skip)
// from another component leads to: the search meets each such edge once, as an edge into a
// component already complete or as the tree edge above a component's root, which spares
// Condense a pass over all edges to find the components that have predecessors.
func components(g *heapgraph.Graph, skip heapgraph.EdgeSet, sc *heapgraph.Scratch) (comp []uint32, count int, entered heapgraph.EdgeSet) {
	n := g.N()
	entered = heapgraph.NewEdgeSet(n)
	r := sc.Uint32s(n) // 0: not visited yet
	type frame struct {
		v, e uint32
		root bool
	}
	var frames []frame
	var done []uint32 // visited nodes whose component is not complete yet (Tarjan's stack)
	next := uint32(1) // next DFS index
	completed := uint32(0)
	finished := func(k uint32) uint32 { return heapgraph.NoNode - 1 - k }

	search := func(s uint32) {
		r[s] = next
		next++
		frames = append(frames, frame{v: s, e: g.Off[s], root: true})
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			if f.e < g.Off[f.v+1] {
				e := f.e
				f.e++
				if skip.Has(e) {
					continue
				}
				w := g.Succ[e]
				if r[w] == 0 {
					r[w] = next
					next++
					frames = append(frames, frame{v: w, e: g.Off[w], root: true})
				} else if r[w] > finished(completed) {
					// w's component is complete, so it is not f.v's.
					entered.Add(w)
				} else if r[w] < r[f.v] {
					r[f.v] = r[w]
					f.root = false
				}
				continue
			}
			v, root := f.v, f.root
			frames = frames[:len(frames)-1]
			if root {
				id := finished(completed)
				for len(done) > 0 && r[v] <= r[done[len(done)-1]] {
					r[done[len(done)-1]] = id
					done = done[:len(done)-1]
				}
				r[v] = id
				completed++
				if len(frames) > 0 {
					entered.Add(v) // the tree edge into v's component comes from outside it
				}
			} else {
				done = append(done, v)
			}
			if len(frames) > 0 {
				if p := &frames[len(frames)-1]; r[v] < r[p.v] {
					r[p.v] = r[v]
					p.root = false
				}
			}
		}
	}
	for v := 1; v < n; v++ {
		if r[v] == 0 {
			search(uint32(v))
		}
	}
	search(0)
	// Completion order runs from sinks to node 0's component; reverse it for a topological order.
	for i, x := range r {
		r[i] = completed - 1 - (heapgraph.NoNode - 1 - x)
	}
	return r, int(completed), entered
}

// Condense builds the component DAG: node c is component c, its size is the sum of its members'
// shallow sizes, and there is one edge c → d for each pair of distinct components joined by at
// least one edge of g outside skip. Component 0 (the super root) also gets an edge to every other
// component that has no predecessor — the thesis's rule for roots without referrers — so that
// the DAG's root reaches everything and dominance in it is defined for every component; these
// come after component 0's real edges, of which there are rootEdges.
func Condense(g *heapgraph.Graph, skip heapgraph.EdgeSet, comp []uint32, count int) (dag *heapgraph.Graph, rootEdges uint32) {
	return condense(g, skip, comp, count, nil, nil)
}

// condense is Condense with the nodes entered from other components already known (see
// components), or nil to find them here.
func condense(g *heapgraph.Graph, skip heapgraph.EdgeSet, comp []uint32, count int, entered heapgraph.EdgeSet, sc *heapgraph.Scratch) (dag *heapgraph.Graph, rootEdges uint32) {
	// Group nodes by component (a counting sort), so that each component's out-edges can be
	// emitted in component order straight into CSR form.
	off := sc.Uint32s(count + 1)
	for _, c := range comp {
		off[c+1]++
	}
	for c := 0; c < count; c++ {
		off[c+1] += off[c]
	}
	byComp := sc.Uint32s(int(off[count]))
	fill := sc.Uint32s(count)
	copy(fill, off[:count])
	for v, c := range comp {
		byComp[fill[c]] = uint32(v)
		fill[c]++
	}
	// hasPred is needed before component 0's edges are emitted, so it takes a pass of its own
	// unless the component search marked the nodes entered from outside.
	hasPred := make([]bool, count)
	if entered != nil {
		for w, word := range entered {
			for ; word != 0; word &= word - 1 {
				hasPred[comp[w<<6|bits.TrailingZeros64(word)]] = true
			}
		}
	} else {
		for v := range comp {
			for e := g.Off[v]; e < g.Off[v+1]; e++ {
				if d := comp[g.Succ[e]]; !skip.Has(e) && d != comp[v] {
					hasPred[d] = true
				}
			}
		}
	}
	size := sc.Uint64s(count)
	dagOff := sc.Uint32s(count + 1)
	// At most one DAG edge per graph edge; pages of the reserve that stay unused are never
	// touched, so the reserve costs address space, not memory, and appends never copy.
	succ := make([]uint32, 0, len(g.Succ)+count)
	seen := fill // reused: seen[d] == c+1 once edge c → d is emitted
	clear(seen)
	for c := 0; c < count; c++ {
		for _, v := range byComp[off[c]:off[c+1]] {
			size[c] += g.Size[v]
			for e := g.Off[v]; e < g.Off[v+1]; e++ {
				if skip.Has(e) {
					continue
				}
				d := comp[g.Succ[e]]
				if d != uint32(c) && seen[d] != uint32(c)+1 {
					seen[d] = uint32(c) + 1
					succ = append(succ, d)
				}
			}
		}
		if c == 0 {
			rootEdges = uint32(len(succ))
			for d := 1; d < count; d++ {
				if !hasPred[d] {
					succ = append(succ, uint32(d))
				}
			}
		}
		dagOff[c+1] = uint32(len(succ))
	}
	sc.Release(off, byComp, fill)
	return &heapgraph.Graph{Off: dagOff, Succ: succ, Size: size}, rootEdges
}
