package heapgraph

import "fmt"

// NoNode marks "no node" in arrays indexed by node (an unreachable node's dominator, the parent
// of the super root on a path). It is never a valid node ID because IDs are dense from 0.
const NoNode = ^uint32(0)

// Builder collects edges in any order and lays them out as a Graph. It keeps the edges as two
// flat slices so that building a graph of millions of nodes allocates a handful of arrays.
type Builder struct {
	size     []uint64
	from, to []uint32
}

// NewBuilder starts a graph of n nodes (node 0 is the super root) with zero shallow sizes.
func NewBuilder(n int) *Builder { return &Builder{size: make([]uint64, n)} }

// SetSize sets the shallow size of node n.
func (b *Builder) SetSize(n uint32, size uint64) { b.size[n] = size }

// AddEdge adds a reference from → to. Duplicate edges are kept: a heap object may hold the same
// reference in two fields, and the algorithms must cope with that.
func (b *Builder) AddEdge(from, to uint32) {
	b.from = append(b.from, from)
	b.to = append(b.to, to)
}

// Build lays the edges out in CSR form, keeping for each node the order in which its edges were
// added. It fails if an edge names a node outside 0..n-1.
func (b *Builder) Build() (*Graph, error) {
	n := len(b.size)
	off := make([]uint32, n+1)
	for i, f := range b.from {
		if int(f) >= n || int(b.to[i]) >= n {
			return nil, fmt.Errorf("heapgraph: edge %d (%d -> %d) names a node outside 0..%d", i, f, b.to[i], n-1)
		}
		off[f+1]++
	}
	for i := 0; i < n; i++ {
		off[i+1] += off[i]
	}
	succ := make([]uint32, len(b.from))
	next := make([]uint32, n)
	copy(next, off[:n])
	for i, f := range b.from {
		succ[next[f]] = b.to[i]
		next[f]++
	}
	g := &Graph{Off: off, Succ: succ, Size: make([]uint32, n)}
	for v, size := range b.size {
		g.SetSize(uint32(v), size)
	}
	return g, nil
}

// Edges returns the graph's edges as parallel from/to slices, in CSR order. Tests and the delta
// debugger use it to take a graph apart and rebuild subsets of it.
func (g *Graph) Edges() (from, to []uint32) {
	from = make([]uint32, len(g.Succ))
	to = make([]uint32, len(g.Succ))
	for n := 0; n < g.N(); n++ {
		for e := g.Off[n]; e < g.Off[n+1]; e++ {
			from[e], to[e] = uint32(n), g.Succ[e]
		}
	}
	return from, to
}

// TotalSize returns the sum of all shallow sizes.
func (g *Graph) TotalSize() uint64 {
	var t uint64
	for v := range g.Size {
		t += g.SizeOf(uint32(v))
	}
	return t
}

// String prints the graph as an edge list with sizes, compact enough to paste into a test when
// the delta debugger reports a minimal failing graph.
func (g *Graph) String() string {
	sizes := make([]uint64, len(g.Size))
	for v := range sizes {
		sizes[v] = g.SizeOf(uint32(v))
	}
	s := fmt.Sprintf("graph of %d nodes, sizes %v, edges:", g.N(), sizes)
	for n := 0; n < g.N(); n++ {
		for _, w := range g.Successors(uint32(n)) {
			s += fmt.Sprintf(" %d->%d", n, w)
		}
	}
	return s
}
