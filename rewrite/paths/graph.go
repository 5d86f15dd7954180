// Package paths is the path-counter algorithm of DuckTracks ("Path-based Object Allocation
// Tracking", Fitzek, Lengauer, Mössenböck, ICPE 2017), made exact and extended to exceptions, as
// pure functions on a control-flow graph. The count pass (rewrite/passes) builds the graph from
// bytecode (package cfg) and inserts what Plan returns. docs/instrumentation.md ("Path
// counters") walks through one method.
//
// The algorithm, numbered as the functions that do it:
//
//  1. The graph (Graph): blocks, each with the allocation sites it completes, and normal edges
//     between them. A virtual node X closes the flow: X→entry and X→each exception handler,
//     and every block that returns or throws → X. Exceptional edges are not edges: an exception
//     is corrected where it is caught (step 6).
//  2. Edge frequencies: observed (Profile.Observed: a profiling run's chord counts, the other
//     edges by flow conservation in ObservedFlow) or estimated (StaticFreq: loop back edges
//     taken, blocks that cannot reach a return cold, handlers cold).
//  3. Paths (BuildPaths, section 2.1 of the paper): the hot path from the entry by most
//     likely successor; side paths from each branching block, ending at a join or an exit;
//     a path that meets itself splits off the loop at its header. Every block and edge
//     belongs to exactly one path.
//  4. Counter locations (Place, section 2.2.1): each path's counter on its least shared edge
//     (share count, ties to the least frequent). The edges left without a counter must form a
//     spanning tree of the graph (this is what makes the paths' counters determine every
//     block's count); Place completes the choice with Kruskal's algorithm so they always do,
//     whatever the path structure.
//  5. Counter semantics (Semantics, section 2.2.2): a potential D over the tree — the sites
//     executed minus the sites counted when control reaches a block — gives each counter the
//     sites it stands for: sem(a→b) = D(a) + sites(a) − D(b). This is the paper's
//     allocations + branching correction + joining correction, through whole branch and join
//     chains, in one formula. Counters whose semantics is empty are dropped.
//  6. Exceptions (Semantics, Plan.Deficit): when an exception leaves block b, D(b) sites ran
//     that no counter counted (or, negative, were counted but did not run). A handler
//     entered from b adds D(b) with one increment of a correction counter whose semantics is
//     D(b); the program keeps the index of the current block's D in a local, written by
//     constant stores where it changes. Handlers are roots of the tree (X→handler), so D is
//     zero where a handler starts.
package paths

import "fmt"

// Graph is a method's control-flow graph as the path algorithm sees it (step 1). Nodes
// 0..N-1 are blocks; node N is the virtual node X.
type Graph struct {
	N int
	// Sites[b] are the indices of the allocation sites block b completes (each counted once
	// per execution of b that reaches its end).
	Sites [][]int
	// Edges are the normal edges; parallel edges (two switch cases to one block) are one edge.
	Edges []Edge
	out   [][]int // edge indices by source node, built by index
	in    [][]int
}

// Edge is one control-flow edge.
type Edge struct {
	From, To int
	// Fixed edges cannot carry a counter: the virtual edges from X to the entry and to
	// handlers, whose code would run before the block they lead to.
	Fixed bool
}

// X returns the virtual node's index.
func (g *Graph) X() int { return g.N }

// AddEdge adds from→to unless it exists, and returns its index.
func (g *Graph) AddEdge(from, to int, fixed bool) int {
	for _, i := range g.outOf(from) {
		if g.Edges[i].To == to {
			return i
		}
	}
	g.Edges = append(g.Edges, Edge{From: from, To: to, Fixed: fixed})
	g.out = nil
	return len(g.Edges) - 1
}

func (g *Graph) index() {
	if g.out != nil {
		return
	}
	g.out = make([][]int, g.N+1)
	g.in = make([][]int, g.N+1)
	for i, e := range g.Edges {
		g.out[e.From] = append(g.out[e.From], i)
		g.in[e.To] = append(g.in[e.To], i)
	}
}

func (g *Graph) outOf(n int) []int {
	g.index()
	return g.out[n]
}

func (g *Graph) inOf(n int) []int {
	g.index()
	return g.in[n]
}

// Out returns the indices of the edges leaving node n.
func (g *Graph) Out(n int) []int { return g.outOf(n) }

// In returns the indices of the edges entering node n.
func (g *Graph) In(n int) []int { return g.inOf(n) }

func (g *Graph) check() error {
	if len(g.Sites) != g.N {
		return fmt.Errorf("graph: %d site lists for %d blocks", len(g.Sites), g.N)
	}
	for i, e := range g.Edges {
		if e.From < 0 || e.From > g.N || e.To < 0 || e.To > g.N {
			return fmt.Errorf("graph: edge %d from %d to %d out of range", i, e.From, e.To)
		}
	}
	return nil
}
