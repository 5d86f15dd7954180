package ddmin

import (
	"math/bits"
	"slices"

	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// The slow oracles below follow the definitions word for word and share no code with the fast
// algorithms they check. They are quadratic or worse, for graphs of tens of nodes (or for a
// sample of nodes of a small real dump).

// reach marks what node 0 — or from, when from is not 0 — reaches without passing through
// removed (NoNode for none) and without the edges in skip.
func reach(g *heapgraph.Graph, skip heapgraph.EdgeSet, from, removed uint32) []bool {
	seen := make([]bool, g.N())
	if from == removed {
		return seen
	}
	seen[from] = true
	stack := []uint32{from}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for e := g.Off[x]; e < g.Off[x+1]; e++ {
			if y := g.Succ[e]; !skip.Has(e) && y != removed && !seen[y] {
				seen[y] = true
				stack = append(stack, y)
			}
		}
	}
	return seen
}

// SlowRetainedSet returns the nodes that become unreachable from node 0 when v is removed,
// v included: what the garbage collector frees once v is gone. It is empty if v is unreachable.
func SlowRetainedSet(g *heapgraph.Graph, skip heapgraph.EdgeSet, v uint32) []uint32 {
	before := reach(g, skip, 0, heapgraph.NoNode)
	if !before[v] {
		return nil
	}
	after := reach(g, skip, 0, v)
	var out []uint32
	for n, b := range before {
		if b && !after[n] {
			out = append(out, uint32(n))
		}
	}
	return out
}

// SlowUnionRetained is the total shallow size of the union of the members' retained sets
// (SlowRetainedSet), and how many of the members node 0 reaches. Members are taken nearest
// node 0 first, by references: a member that lies in the union already lies in the retained set
// of one taken before, without which nothing reaches it, nor anything it alone reaches, so what it
// retains is in the union already and it needs no removal of its own.
func SlowUnionRetained(g *heapgraph.Graph, skip heapgraph.EdgeSet, members []uint32) (bytes uint64, reached int) {
	before := reach(g, skip, 0, heapgraph.NoNode)
	dist := make([]int, g.N())
	for queue := []uint32{0}; len(queue) > 0; queue = queue[1:] {
		x := queue[0]
		for e := g.Off[x]; e < g.Off[x+1]; e++ {
			if y := g.Succ[e]; !skip.Has(e) && y != 0 && dist[y] == 0 {
				dist[y] = dist[x] + 1
				queue = append(queue, y)
			}
		}
	}
	members = slices.Clone(members)
	slices.SortFunc(members, func(a, b uint32) int { return dist[a] - dist[b] })
	in := make([]bool, g.N())
	for _, x := range members {
		if !before[x] {
			continue
		}
		reached++
		if in[x] {
			continue
		}
		after := reach(g, skip, 0, x)
		for n, b := range before {
			in[n] = in[n] || b && !after[n]
		}
	}
	for n, ok := range in {
		if ok {
			bytes += g.SizeOf(uint32(n))
		}
	}
	return bytes, reached
}

// SlowRetained is the total shallow size of SlowRetainedSet.
func SlowRetained(g *heapgraph.Graph, skip heapgraph.EdgeSet, v uint32) uint64 {
	var t uint64
	for _, n := range SlowRetainedSet(g, skip, v) {
		t += g.SizeOf(n)
	}
	return t
}

// SlowDynamic sums the shallow sizes of everything reachable from v, v included.
func SlowDynamic(g *heapgraph.Graph, skip heapgraph.EdgeSet, v uint32) uint64 {
	var t uint64
	for n, r := range reach(g, skip, v, heapgraph.NoNode) {
		if r {
			t += g.SizeOf(uint32(n))
		}
	}
	return t
}

// SlowDominators computes immediate dominators by the classic data-flow equations,
// Dom(0) = {0} and Dom(n) = {n} ∪ ⋂ Dom(p) over reachable predecessors p, iterated to a fixed
// point on bit sets; idom(n) is the strict dominator of n that every other strict dominator of n
// dominates. Unreachable nodes and node 0 get NoNode.
func SlowDominators(g *heapgraph.Graph, skip heapgraph.EdgeSet) []uint32 {
	n := g.N()
	words := (n + 63) / 64
	reachable := reach(g, skip, 0, heapgraph.NoNode)
	dom := make([][]uint64, n)
	for v := range dom {
		dom[v] = make([]uint64, words)
		if v == 0 {
			dom[v][0] = 1
			continue
		}
		for w := range dom[v] {
			dom[v][w] = ^uint64(0)
		}
	}
	preds := make([][]uint32, n)
	for v := 0; v < n; v++ {
		for e := g.Off[v]; e < g.Off[v+1]; e++ {
			if !skip.Has(e) && reachable[v] {
				preds[g.Succ[e]] = append(preds[g.Succ[e]], uint32(v))
			}
		}
	}
	tmp := make([]uint64, words)
	for changed := true; changed; {
		changed = false
		for v := 1; v < n; v++ {
			if !reachable[v] {
				continue
			}
			for w := range tmp {
				tmp[w] = ^uint64(0)
			}
			for _, p := range preds[v] {
				for w := range tmp {
					tmp[w] &= dom[p][w]
				}
			}
			tmp[v/64] |= 1 << (v % 64)
			for w := range tmp {
				if tmp[w] != dom[v][w] {
					dom[v][w] = tmp[w]
					changed = true
				}
			}
		}
	}
	count := func(v int) int {
		c := 0
		for _, x := range dom[v] {
			c += bits.OnesCount64(x)
		}
		return c
	}
	idom := make([]uint32, n)
	for v := range idom {
		idom[v] = heapgraph.NoNode
		if v == 0 || !reachable[v] {
			continue
		}
		// The immediate dominator is the strict dominator with the most dominators of its own.
		best, bestCount := -1, -1
		for d := 0; d < n; d++ {
			if d != v && dom[v][d/64]&(1<<(d%64)) != 0 && count(d) > bestCount {
				best, bestCount = d, count(d)
			}
		}
		idom[v] = uint32(best)
	}
	return idom
}
