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
	// Size is the shallow size of each node (0 for the super root) in units of 1<<SizeShift
	// bytes — 8 for a heap dump, where every object is a whole number of 8-byte words, so that
	// four bytes per node cover objects up to 32 GB. A size that is not a whole number of units,
	// or too large, is BigSize here and exact in Big. Read sizes with SizeOf.
	Size      []uint32
	SizeShift uint8
	Big       map[uint32]uint64
}

// BigSize marks a node whose size is kept in Graph.Big.
const BigSize = ^uint32(0)

// SizeOf returns the shallow size of node n in bytes.
func (g *Graph) SizeOf(n uint32) uint64 {
	if s := g.Size[n]; s != BigSize {
		return uint64(s) << g.SizeShift
	}
	return g.big(n)
}

func (g *Graph) big(n uint32) uint64 { return g.Big[n] }

// SetSize sets the shallow size of node n to bytes.
func (g *Graph) SetSize(n uint32, bytes uint64) {
	units := bytes >> g.SizeShift
	if units<<g.SizeShift == bytes && units < uint64(BigSize) {
		g.Size[n] = uint32(units)
		if g.Big != nil {
			delete(g.Big, n)
		}
		return
	}
	if g.Big == nil {
		g.Big = map[uint32]uint64{}
	}
	g.Size[n] = BigSize
	g.Big[n] = bytes
}

// AddSize adds bytes to the shallow size of node n (the condensed graph of components sums its
// members' sizes so).
func (g *Graph) AddSize(n uint32, bytes uint64) {
	if s := g.Size[n]; s != BigSize {
		if units := bytes >> g.SizeShift; units<<g.SizeShift == bytes {
			if sum := uint64(s) + units; sum < uint64(BigSize) {
				g.Size[n] = uint32(sum)
				return
			}
		}
	}
	g.SetSize(n, g.SizeOf(n)+bytes)
}

// N returns the number of nodes, including the super root.
func (g *Graph) N() int { return len(g.Off) - 1 }

// Successors returns the successors of node n; the slice aliases the graph and must not be changed.
func (g *Graph) Successors(n uint32) []uint32 { return g.Succ[g.Off[n]:g.Off[n+1]] }
