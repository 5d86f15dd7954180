package dynsize

import (
	"container/heap"

	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// Sizes answers dynamic-size queries on one graph.
type Sizes struct {
	// Comp maps each node to its component.
	Comp []uint32
	// DAG is the condensed component graph; DAG.Size holds each component's shallow size.
	DAG *heapgraph.Graph
	// Rep and Members name a component: its lowest node and how many nodes it has.
	Rep, Members []uint32
	// DAP marks the dominating articulation points of the DAG.
	DAP []bool

	dyn       []uint64 // exact dynamic size of each DAP (0 elsewhere)
	rootEdges uint32   // component 0's real edges; the rest of its list only roots the DAG
	stamp     []uint32 // visit marks, one epoch per walk, so walks never clear an array
	epoch     uint32
	stack     []uint32
	// Visited counts components expanded by walks, the work measure the thesis tabulates.
	Visited uint64
}

// New condenses g (leaving out the edges in skip), finds the dominating articulation points and
// computes their dynamic sizes. It costs time linear in the size of the graph: each component is
// expanded by the walk of exactly one dominating articulation point, the nearest that reaches it.
func New(g *heapgraph.Graph, skip heapgraph.EdgeSet) *Sizes {
	comp, count := Components(g, skip)
	dag, rep, members, rootEdges := Condense(g, skip, comp, count)
	s := &Sizes{Comp: comp, DAG: dag, Rep: rep, Members: members, rootEdges: rootEdges,
		stamp: make([]uint32, count), dyn: make([]uint64, count)}
	s.DAP = dominatingArticulationPoints(dag, dominators.Compute(dag, nil).Idom)
	// Children have larger numbers, so going down the numbers finishes every point below a
	// point before the point itself is walked.
	for c := count - 1; c >= 0; c-- {
		if s.DAP[c] {
			s.dyn[c] = s.walk(uint32(c))
		}
	}
	return s
}

// dominatingArticulationPoints is the thesis's Listing 4.4 on a DAG numbered topologically from
// its root. value[c] is the smallest (closest to the root) immediate dominator of any component
// reachable from c, c included. A component with successors is a dominating articulation point
// exactly when that minimum over its successors is c itself: everything it reaches is dominated
// by it. (Were some reachable y not dominated by c, the first such node on a path from c has an
// immediate dominator above c, which reaches c and so has a smaller number.)
func dominatingArticulationPoints(dag *heapgraph.Graph, idom []uint32) []bool {
	n := dag.N()
	dap := make([]bool, n)
	value := make([]uint32, n)
	for c := n - 1; c >= 0; c-- {
		m := heapgraph.NoNode
		for _, d := range dag.Successors(uint32(c)) {
			m = min(m, value[d])
		}
		dap[c] = m == uint32(c)
		value[c] = min(m, idom[c]) // idom of the root is NoNode, leaving m
	}
	return dap
}

// walk sums the sizes of the components reachable from c, taking a dominating articulation
// point's precomputed size instead of walking past it.
func (s *Sizes) walk(c uint32) uint64 {
	s.epoch++
	if s.epoch == 0 {
		clear(s.stamp)
		s.epoch = 1
	}
	s.stamp[c] = s.epoch
	stack := append(s.stack[:0], c)
	var total uint64
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x != c && s.DAP[x] {
			total += s.dyn[x]
			continue
		}
		s.Visited++
		total += s.DAG.Size[x]
		succ := s.DAG.Successors(x)
		if x == 0 {
			succ = succ[:s.rootEdges]
		}
		for _, y := range succ {
			if s.stamp[y] != s.epoch {
				s.stamp[y] = s.epoch
				stack = append(stack, y)
			}
		}
	}
	s.stack = stack
	return total
}

// Component returns the dynamic size of component c.
func (s *Sizes) Component(c uint32) uint64 {
	if s.DAP[c] {
		return s.dyn[c]
	}
	return s.walk(c)
}

// Of returns the dynamic size of node v.
func (s *Sizes) Of(v uint32) uint64 { return s.Component(s.Comp[v]) }

// Ranked is one component in a ranking by dynamic size.
type Ranked struct {
	Comp    uint32
	Dynamic uint64
}

// Top returns the k components with the largest dynamic size, largest first, leaving out
// component 0 (the super root, which reaches everything). Ties go to the lower component.
//
// It never computes every component's size. A component reaches no more than any component
// that reaches it, so a best-first search from the root's successors, keyed by an upper bound
// (the sum of the bounds of a component's successors, capped by its predecessor's exact size),
// can stop once k exact sizes beat every bound still waiting.
func (s *Sizes) Top(k int) []Ranked {
	n := s.DAG.N()
	if k <= 0 || n <= 1 {
		return nil
	}
	ub := make([]uint64, n)
	for c := n - 1; c >= 0; c-- {
		if s.DAP[c] {
			ub[c] = s.dyn[c]
			continue
		}
		b := s.DAG.Size[c]
		for _, d := range s.DAG.Successors(uint32(c)) {
			if b += ub[d]; b < ub[d] {
				b = ^uint64(0) // saturate: the bound only has to be an upper bound
			}
		}
		ub[c] = b
	}
	queued := make([]bool, n)
	q := &rankHeap{}
	push := func(c uint32, bound uint64) {
		if !queued[c] {
			queued[c] = true
			heap.Push(q, rankItem{key: min(bound, ub[c]), comp: c, exact: s.DAP[c]})
		}
	}
	for _, c := range s.DAG.Successors(0) {
		push(c, ub[c])
	}
	var out []Ranked
	for q.Len() > 0 && len(out) < k {
		it := heap.Pop(q).(rankItem)
		if !it.exact {
			heap.Push(q, rankItem{key: s.walk(it.comp), comp: it.comp, exact: true})
			continue
		}
		out = append(out, Ranked{Comp: it.comp, Dynamic: it.key})
		for _, d := range s.DAG.Successors(it.comp) {
			push(d, it.key)
		}
	}
	return out
}

type rankItem struct {
	key   uint64
	comp  uint32
	exact bool
}

type rankHeap []rankItem

func (h rankHeap) Len() int { return len(h) }
func (h rankHeap) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key > h[j].key
	}
	// At equal keys an exact size comes out first, so a tie never forces an extra walk.
	if h[i].exact != h[j].exact {
		return h[i].exact
	}
	return h[i].comp < h[j].comp
}
func (h rankHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *rankHeap) Push(x any)   { *h = append(*h, x.(rankItem)) }
func (h *rankHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
