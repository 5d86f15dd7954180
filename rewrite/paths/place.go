package paths

import (
	"fmt"
	"sort"
)

// Place chooses the counter edges (step 4, section 2.2.1): on each path the edge the fewest
// flows share — its own, plus each path that branches off at or after the edge's end block
// and each that joins at or before its start block — the least frequent among equals. Fixed
// edges never carry one. The edges without a counter must be a spanning tree of the graph:
// Kruskal's algorithm adds edges to the tree in the order fixed edges, then every path's other
// edges most frequent first, then the chosen edges, and the edges it cannot add (they would
// close a cycle) are the counters. For paths as BuildPaths makes them that is exactly one
// chosen edge per path; for any other structure it is still a valid, exact choice. The result
// is sorted.
func Place(g *Graph, ps []Path, freq []float64) []int {
	g.index()
	owner := make([]int, len(g.Edges))
	for i := range owner {
		owner[i] = -1
	}
	for p, path := range ps {
		for _, e := range path.Edges {
			owner[e] = p
		}
	}
	chosen := make([]bool, len(g.Edges))
	for p := range ps {
		if e := leastShared(g, ps[p], owner, p, freq); e >= 0 {
			chosen[e] = true
		}
	}
	order := make([]int, len(g.Edges))
	for i := range order {
		order[i] = i
	}
	rank := func(e int) int {
		switch {
		case g.Edges[e].Fixed:
			return 0
		case chosen[e]:
			return 2
		}
		return 1
	}
	sort.SliceStable(order, func(i, j int) bool {
		ri, rj := rank(order[i]), rank(order[j])
		if ri != rj {
			return ri < rj
		}
		return freq[order[i]] > freq[order[j]]
	})
	uf := newUnionFind(g.N + 1)
	var counters []int
	for _, e := range order {
		if !uf.union(g.Edges[e].From, g.Edges[e].To) {
			counters = append(counters, e)
		}
	}
	sort.Ints(counters)
	return counters
}

// leastShared returns the edge of path p that carries its counter, -1 when all are fixed.
func leastShared(g *Graph, path Path, owner []int, p int, freq []float64) int {
	// branches[n]: paths that start at block n; joins[n]: paths that end at n.
	branches := func(n int) int {
		k := 0
		for _, e := range g.outOf(n) {
			if owner[e] != p {
				k++
			}
		}
		return k
	}
	joins := func(n int) int {
		k := 0
		for _, e := range g.inOf(n) {
			if owner[e] != p {
				k++
			}
		}
		return k
	}
	best, bestShare := -1, 0
	for i, e := range path.Edges {
		if g.Edges[e].Fixed {
			continue
		}
		share := 1
		for _, n := range path.Blocks[min(i, len(path.Blocks)):] {
			share += branches(n) // blocks from this edge's end on
		}
		for _, n := range path.Blocks[:min(i, len(path.Blocks))] {
			share += joins(n) // blocks up to this edge's start
		}
		if best < 0 || share < bestShare || share == bestShare && freq[e] < freq[best] {
			best, bestShare = e, share
		}
	}
	return best
}

type unionFind []int

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = i
	}
	return u
}

func (u unionFind) find(x int) int {
	for u[x] != x {
		u[x] = u[u[x]]
		x = u[x]
	}
	return x
}

// union joins the sets of a and b; false when they were one set already.
func (u unionFind) union(a, b int) bool {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return false
	}
	u[ra] = rb
	return true
}

// Vec is a combination of allocation sites: site index → multiplicity. A zero multiplicity is
// never stored.
type Vec map[int]int

func (v Vec) add(w Vec, sign int) {
	for s, k := range w {
		if n := v[s] + sign*k; n != 0 {
			v[s] = n
		} else {
			delete(v, s)
		}
	}
}

func (v Vec) addSites(sites []int, sign int) {
	for _, s := range sites {
		if n := v[s] + sign; n != 0 {
			v[s] = n
		} else {
			delete(v, s)
		}
	}
}

func (v Vec) clone() Vec {
	out := make(Vec, len(v))
	for s, k := range v {
		out[s] = k
	}
	return out
}

// Key is v written out in site order, the same for equal combinations ("" when empty).
func (v Vec) Key() string {
	keys := make([]int, 0, len(v))
	for s := range v {
		keys = append(keys, s)
	}
	sort.Ints(keys)
	out := ""
	for _, s := range keys {
		out += fmt.Sprintf("%d*%d ", s, v[s])
	}
	return out
}

// Semantics computes step 5 for the counters Place chose: the deficit D of every block (the
// sites executed minus the sites counted, when control reaches the block's start) and each
// counter's semantics. D is a potential over the tree of uncounted edges, zero at X: along a
// tree edge a→b, D(b) = D(a) + sites(a); along a counter edge, D(b) = D(a) + sites(a) − sem.
// So sem(a→b) = D(a) + sites(a) − D(b), for a = X with D(X) + sites(X) = 0. It fails when the
// uncounted edges are not a spanning tree of the nodes they must connect.
func Semantics(g *Graph, counters []int) (deficit []Vec, sem map[int]Vec, err error) {
	if err := g.check(); err != nil {
		return nil, nil, err
	}
	isCounter := make([]bool, len(g.Edges))
	for _, e := range counters {
		isCounter[e] = true
	}
	d := make([]Vec, g.N+1)
	d[g.X()] = Vec{}
	out := func(n int) Vec { // D at n's end
		v := d[n].clone()
		if n != g.X() {
			v.addSites(g.Sites[n], 1)
		}
		return v
	}
	work := []int{g.X()}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		for _, e := range g.outOf(n) {
			if to := g.Edges[e].To; !isCounter[e] && d[to] == nil {
				d[to] = out(n)
				work = append(work, to)
			} else if !isCounter[e] && d[to].Key() != out(n).Key() {
				return nil, nil, fmt.Errorf("paths: uncounted edges %d→%d close a cycle", n, to)
			}
		}
		for _, e := range g.inOf(n) {
			if from := g.Edges[e].From; !isCounter[e] && d[from] == nil {
				v := d[n].clone()
				v.addSites(g.Sites[from], -1)
				d[from] = v
				work = append(work, from)
			} else if !isCounter[e] && out(from).Key() != d[n].Key() {
				return nil, nil, fmt.Errorf("paths: uncounted edges %d→%d close a cycle", from, n)
			}
		}
	}
	for n, v := range d {
		if v == nil {
			return nil, nil, fmt.Errorf("paths: node %d is not connected by uncounted edges", n)
		}
	}
	sem = map[int]Vec{}
	for _, e := range counters {
		a, b := g.Edges[e].From, g.Edges[e].To
		if d[a] == nil || d[b] == nil {
			return nil, nil, fmt.Errorf("paths: counter edge %d→%d outside the tree", a, b)
		}
		v := out(a)
		v.add(d[b], -1)
		sem[e] = v
	}
	return d[:g.N], sem, nil
}
