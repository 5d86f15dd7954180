// Package heapgraph holds the object graph of a heap dump in a compact form that the graph
// algorithms (dominators, retained and dynamic sizes) work on without knowing about HPROF.
package heapgraph

// Graph is a directed graph in compressed sparse row form. Node 0 is the super root: its
// successors are the GC roots (and, by the thesis's rule, roots without referrers), so every
// reachable node is reachable from node 0. Node IDs are dense: 0..N-1.
//
// A heap of tens of millions of objects must fit in less memory than its dump file, so the
// arrays are flat slices of fixed-width integers rather than per-node structs.
type Graph struct {
	// Off has N+1 entries; the successors of node n are Succ[Off[n]:Off[n+1]].
	Off  []uint32
	Succ []uint32
	// Size is the shallow size in bytes of each node (0 for the super root).
	Size []uint64
}

// N returns the number of nodes, including the super root.
func (g *Graph) N() int { return len(g.Off) - 1 }

// Successors returns the successors of node n; the slice aliases the graph and must not be changed.
func (g *Graph) Successors(n uint32) []uint32 { return g.Succ[g.Off[n]:g.Off[n+1]] }
