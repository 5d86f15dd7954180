package paths

import "sort"

// Path is one path of step 3: the edges it owns in order, and the blocks between them. A
// path starts at X or at its branching block (not its own) and ends at X (an exit), at its
// joining block (another path's, or its own loop header for a loop path), or nowhere (a
// path that runs into a loop it cannot leave: its last block is its own).
type Path struct {
	Edges  []int
	Blocks []int
}

// BuildPaths covers the graph with paths (step 3, section 2.1 of the paper). freq gives each
// edge's frequency; the hot path follows the most frequent successor. Blocks no edge from X
// reaches belong to no path.
func BuildPaths(g *Graph, freq []float64) []Path {
	g.index()
	b := &builder{g: g, freq: freq, blockOwner: make([]int, g.N), edgeOwner: make([]int, len(g.Edges))}
	for i := range b.blockOwner {
		b.blockOwner[i] = -1
	}
	for i := range b.edgeOwner {
		b.edgeOwner[i] = -1
	}
	// The roots: X→entry first (the hot path), then X→each handler, most frequent first.
	for _, e := range b.byFreq(g.outOf(g.X())) {
		if b.edgeOwner[e] >= 0 || b.blockOwner[g.Edges[e].To] >= 0 {
			continue
		}
		b.grow(e)
		// Side paths of every path made so far, loop paths included, until none is left.
		for k := 0; k < len(b.paths); k++ {
			for _, n := range b.paths[k].Blocks {
				for _, s := range b.byFreq(g.outOf(n)) {
					if b.edgeOwner[s] < 0 {
						b.grow(s)
					}
				}
			}
		}
	}
	return b.paths
}

type builder struct {
	g          *Graph
	freq       []float64
	paths      []Path
	blockOwner []int
	edgeOwner  []int
}

// byFreq returns the edges most frequent first, in index order among equals.
func (b *builder) byFreq(edges []int) []int {
	out := append([]int(nil), edges...)
	sort.SliceStable(out, func(i, j int) bool { return b.freq[out[i]] > b.freq[out[j]] })
	return out
}

// grow builds the path that starts with edge e: it appends the most likely successor until it
// reaches X or another path's block (a join); meeting one of its own blocks splits the loop off
// at that header (splitLoop) and goes on from the header by another successor.
func (b *builder) grow(e int) {
	g := b.g
	p := len(b.paths)
	b.paths = append(b.paths, Path{})
	for {
		b.edgeOwner[e] = p
		b.paths[p].Edges = append(b.paths[p].Edges, e)
		to := g.Edges[e].To
		if to == g.X() {
			return // an exit
		}
		if owner := b.blockOwner[to]; owner >= 0 {
			if owner != p {
				return // a join
			}
			b.splitLoop(p, to)
		} else {
			b.blockOwner[to] = p
			b.paths[p].Blocks = append(b.paths[p].Blocks, to)
		}
		e = b.next(to)
		if e < 0 {
			return // the header has no other way on: the path ends there
		}
	}
}

// next returns the most likely edge out of n that no path owns yet, -1 when none is left.
func (b *builder) next(n int) int {
	for _, e := range b.byFreq(b.g.outOf(n)) {
		if b.edgeOwner[e] < 0 {
			return e
		}
	}
	return -1
}

// splitLoop turns the part of path p after its block header, with the edge just appended that
// leads back to header, into a loop path of its own (branching and joining at header).
func (b *builder) splitLoop(p, header int) {
	cur := &b.paths[p]
	at := -1
	for i, n := range cur.Blocks {
		if n == header {
			at = i
		}
	}
	// Edges[i] leads to Blocks[i] when the path starts at X or a branching block: the loop is
	// the edges from the one leaving header (at+1) to the last, and the blocks after header.
	loop := Path{Edges: append([]int(nil), cur.Edges[at+1:]...), Blocks: append([]int(nil), cur.Blocks[at+1:]...)}
	cur.Edges = cur.Edges[:at+1]
	cur.Blocks = cur.Blocks[:at+1]
	l := len(b.paths)
	for _, e := range loop.Edges {
		b.edgeOwner[e] = l
	}
	for _, n := range loop.Blocks {
		b.blockOwner[n] = l
	}
	b.paths = append(b.paths, loop)
}
