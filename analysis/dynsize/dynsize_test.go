package dynsize_test

import (
	"fmt"
	"testing"

	"github.com/heapledger/heapledger/analysis/dynsize"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/heapgraph/graphtest"
	"github.com/heapledger/heapledger/internal/ddmin"
)

// reachSize is the obvious definition: the sizes of everything reachable from v.
func reachSize(g *heapgraph.Graph, v uint32) uint64 { return ddmin.SlowDynamic(g, nil, v) }

// figure411 is the graph of the thesis's Figure 4.11 (as its text describes it): node 2 is an
// articulation point of the undirected graph (it alone connects 5), yet node 4 below it is
// also reached from node 1 through node 3.
func figure411(t *testing.T) *heapgraph.Graph {
	return graphtest.MustFromEdges(t, 6, [2]uint32{0, 1}, [2]uint32{1, 2}, [2]uint32{1, 3}, [2]uint32{2, 4}, [2]uint32{3, 4}, [2]uint32{2, 5})
}

// articulationPoints finds, by brute force, the nodes whose removal disconnects the undirected
// version of g — the thesis's plain articulation points.
func articulationPoints(g *heapgraph.Graph) []bool {
	n := g.N()
	adj := make([][]uint32, n)
	for v := 0; v < n; v++ {
		for _, w := range g.Successors(uint32(v)) {
			adj[v] = append(adj[v], w)
			adj[w] = append(adj[w], uint32(v))
		}
	}
	parts := func(removed int) int {
		seen := make([]bool, n)
		k := 0
		for s := 0; s < n; s++ {
			if s == removed || seen[s] {
				continue
			}
			k++
			stack := []uint32{uint32(s)}
			seen[s] = true
			for len(stack) > 0 {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, y := range adj[x] {
					if int(y) != removed && !seen[y] {
						seen[y] = true
						stack = append(stack, y)
					}
				}
			}
		}
		return k
	}
	base := parts(-1)
	ap := make([]bool, n)
	for v := 0; v < n; v++ {
		ap[v] = parts(v) > base
	}
	return ap
}

// plainArticulationDynamicSize is the thesis's first, defective variant: walk from v and, at any
// articulation point, add that point's dynamic size instead of walking on.
func plainArticulationDynamicSize(g *heapgraph.Graph, v uint32) uint64 {
	ap := articulationPoints(g)
	seen := map[uint32]bool{v: true}
	stack := []uint32{v}
	var total uint64
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x != v && ap[x] {
			total += reachSize(g, x)
			continue
		}
		total += g.SizeOf(x)
		for _, y := range g.Successors(x) {
			if !seen[y] {
				seen[y] = true
				stack = append(stack, y)
			}
		}
	}
	return total
}

// TestFigure411NoDoubleCounting builds the thesis's counterexample: the plain articulation-point
// algorithm counts node 4 twice for node 1; ours must equal the reachable set's size.
func TestFigure411NoDoubleCounting(t *testing.T) {
	g := figure411(t)
	if ap := articulationPoints(g); !ap[2] {
		t.Fatal("test graph is wrong: node 2 should be an articulation point")
	}
	want := reachSize(g, 1) // nodes 1..5
	if want != 5 {
		t.Fatalf("reachable size of node 1 = %d, want 5", want)
	}
	if plain := plainArticulationDynamicSize(g, 1); plain == want {
		t.Fatalf("plain articulation-point variant gave %d, expected it to double count node 4", plain)
	}
	s := dynsize.New(g, nil)
	if s.DAP.Has(s.Comp[2]) {
		t.Error("node 2 reaches node 4, which it does not dominate, yet was taken for a dominating articulation point")
	}
	for v := uint32(1); v <= 5; v++ {
		if got := s.Of(v); got != reachSize(g, v) {
			t.Errorf("dynamic size of %d = %d, want %d", v, got, reachSize(g, v))
		}
	}
}

// TestSharedChildren is Figure 2.2: 2 and 3 retain only themselves but each reaches five nodes.
func TestSharedChildren(t *testing.T) {
	edges := [][2]uint32{{0, 1}, {1, 2}, {1, 3}}
	for c := uint32(4); c <= 7; c++ {
		edges = append(edges, [2]uint32{2, c}, [2]uint32{3, c})
	}
	s := dynsize.New(graphtest.MustFromEdges(t, 8, edges...), nil)
	for v, want := range map[uint32]uint64{1: 7, 2: 5, 3: 5, 4: 1, 0: 7} {
		if got := s.Of(v); got != want {
			t.Errorf("dynamic size of %d = %d, want %d", v, got, want)
		}
	}
	top := s.Top(3)
	if len(top) != 3 || top[0].Dynamic != 7 || top[1].Dynamic != 5 || top[2].Dynamic != 5 {
		t.Errorf("top 3 = %+v, want sizes 7, 5, 5", top)
	}
}

// TestComponentsAgreeWithReachability checks components against their definition (mutual
// reachability) and their numbering against topological order, on a graph with a three-node
// cycle, a two-node cycle, a self-loop and an unreachable node.
func TestComponentsAgreeWithReachability(t *testing.T) {
	g := graphtest.MustFromEdges(t, 9,
		[2]uint32{0, 1}, [2]uint32{1, 2}, [2]uint32{2, 3}, [2]uint32{3, 4}, [2]uint32{4, 2},
		[2]uint32{3, 5}, [2]uint32{5, 6}, [2]uint32{6, 5}, [2]uint32{6, 7}, [2]uint32{7, 7}, [2]uint32{4, 6})
	comp, count := dynsize.Components(g, nil)
	reach := func(a, b uint32) bool {
		seen := map[uint32]bool{a: true}
		st := []uint32{a}
		for len(st) > 0 {
			x := st[len(st)-1]
			st = st[:len(st)-1]
			if x == b {
				return true
			}
			for _, y := range g.Successors(x) {
				if !seen[y] {
					seen[y] = true
					st = append(st, y)
				}
			}
		}
		return false
	}
	if count != 6 {
		t.Errorf("%d components, want 6: {0} {1} {2,3,4} {5,6} {7} {8}", count)
	}
	for a := uint32(0); a < 9; a++ {
		for b := uint32(0); b < 9; b++ {
			same := reach(a, b) && reach(b, a)
			if (comp[a] == comp[b]) != same {
				t.Errorf("nodes %d and %d: same component %v, mutually reachable %v", a, b, comp[a] == comp[b], same)
			}
			if comp[a] < comp[b] && reach(b, a) && !same {
				t.Errorf("component order not topological: %d (comp %d) is reached from %d (comp %d)", a, comp[a], b, comp[b])
			}
		}
	}
	if comp[0] != 0 || comp[8] == comp[7] {
		t.Errorf("comp[0] = %d, comp[8] = %d; want 0 and a component of its own", comp[0], comp[8])
	}
}

func TestGeneratedGraphs(t *testing.T) {
	t.Run("ListWithData", func(t *testing.T) {
		const entries = 500_000 // deep enough that anything recursive would blow up
		n := 2 * entries
		s := dynsize.New(graphtest.ListWithData(entries), nil)
		for i := 1; i <= n; i += 2 {
			if got := s.Of(uint32(i)); got != uint64(n-i+1) {
				t.Fatalf("entry %d: dynamic size %d, want %d", i, got, n-i+1)
			}
			if !s.DAP.Has(s.Comp[i]) {
				t.Fatalf("entry %d should be a dominating articulation point", i)
			}
		}
	})
	t.Run("BalancedTree", func(t *testing.T) {
		g := graphtest.BalancedTree(1023)
		s := dynsize.New(g, nil)
		for v := uint32(1); v <= 1023; v++ {
			if got := s.Of(v); got != reachSize(g, v) {
				t.Fatalf("node %d: %d, want %d", v, got, reachSize(g, v))
			}
		}
	})
	t.Run("Ladder", func(t *testing.T) {
		const n = 300
		s := dynsize.New(graphtest.Ladder(n), nil)
		for i := 1; i <= n; i++ {
			if got := s.Of(uint32(i)); got != uint64(n-i+1) {
				t.Fatalf("ladder %d: %d, want %d", i, got, n-i+1)
			}
		}
	})
	t.Run("Triangle", func(t *testing.T) {
		const rows = 40
		s := dynsize.New(graphtest.Triangle(rows), nil)
		for r := 0; r < rows; r++ {
			k := uint64(rows - r)
			for c := 0; c <= r; c++ {
				if got := s.Of(graphtest.TriangleID(r, c)); got != k*(k+1)/2 {
					t.Fatalf("triangle (%d,%d): %d, want %d", r, c, got, k*(k+1)/2)
				}
			}
		}
		if top := s.Top(1); len(top) != 1 || top[0].Dynamic != rows*(rows+1)/2 {
			t.Errorf("top = %+v, want the apex", top)
		}
	})
	t.Run("DoublyLinkedList", func(t *testing.T) {
		const n = 200_000
		g := graphtest.DoublyLinkedList(n)
		s := dynsize.New(g, nil)
		// The entries form one component; each reaches all entries and all data.
		rep, members := s.Describe([]uint32{s.Comp[2]})
		if s.Comp[2] != s.Comp[n+1] || members[0] != n || s.LargestComp != n || s.BigComponents != 1 {
			t.Fatalf("entries not one component of %d: members %d (largest %d, %d of more than one)", n, members[0], s.LargestComp, s.BigComponents)
		}
		if s.Rep(s.Comp[2]) != rep[0] || rep[0] != 2 {
			t.Errorf("component of the entries named by node %d (Rep %d), want its lowest node", rep[0], s.Rep(s.Comp[2]))
		}
		if got := s.Of(2); got != 2*n {
			t.Errorf("entry: %d, want %d", got, 2*n)
		}
		if got := s.Of(1); got != 2*n+1 {
			t.Errorf("head: %d, want %d", got, 2*n+1)
		}
	})
}

func TestSkipEdges(t *testing.T) {
	g := graphtest.MustFromEdges(t, 4, [2]uint32{0, 1}, [2]uint32{1, 2}, [2]uint32{1, 3})
	skip := heapgraph.NewEdgeSet(len(g.Succ))
	skip.Add(2) // 1 -> 3, e.g. a weak referent
	s := dynsize.New(g, skip)
	if got := s.Of(1); got != 2 {
		t.Errorf("dynamic size of 1 with 1->3 skipped = %d, want 2", got)
	}
	if got := s.Of(3); got != 1 {
		t.Errorf("node 3, reached only through a skipped edge, has dynamic size %d, want its own 1", got)
	}
}

// A Describer fed the component column in parts, of any sizes, names each component asked for
// (some twice, some with no nodes, one beyond every node's) by its lowest node and counts its
// nodes, as counting over the whole column does.
func TestDescriberInParts(t *testing.T) {
	const n = 5000
	comp := make([]uint32, n)
	x := uint32(12345)
	for i := range comp {
		x = x*1664525 + 1013904223
		comp[i] = x >> 22 % 700 // 700 components, a few nodes each
	}
	cs := []uint32{0, 3, 3, 699, 650, 10_000, 1 << 20}
	want := make(map[uint32][2]uint32) // component → lowest node, nodes
	for v := n - 1; v >= 0; v-- {
		w := want[comp[v]]
		want[comp[v]] = [2]uint32{uint32(v), w[1] + 1}
	}
	check := func(how string, d *dynsize.Describer) {
		t.Helper()
		rep, members := d.Result()
		for i, c := range cs {
			w, ok := want[c]
			if !ok {
				w = [2]uint32{heapgraph.NoNode, 0}
			}
			if rep[i] != w[0] || members[i] != w[1] {
				t.Fatalf("%s: component %d named %d with %d nodes, want %d with %d", how, c, rep[i], members[i], w[0], w[1])
			}
		}
	}
	for _, part := range []int{1, 7, 64, 999, n} {
		d := dynsize.NewDescriber(cs)
		for lo := 0; lo < n; lo += part {
			d.Add(lo, comp[lo:min(lo+part, n)])
		}
		check(fmt.Sprintf("parts of %d", part), d)
	}
	// Two describers given the halves, the second merged into the first, say the same.
	for _, half := range []int{0, 1, 2500, n - 1, n} {
		d, d2 := dynsize.NewDescriber(cs), dynsize.NewDescriber(cs)
		d.Add(0, comp[:half])
		d2.Add(half, comp[half:])
		d.Merge(d2)
		check(fmt.Sprintf("halves at %d", half), d)
	}
	rep, members := dynsize.Describe(comp, cs)
	if w := want[699]; rep[3] != w[0] || members[3] != w[1] {
		t.Fatalf("Describe: component 699 named %d with %d nodes, want %d with %d", rep[3], members[3], w[0], w[1])
	}
}

// TestTopLeavesOut: a node all of whose edges are skipped is a component that only the DAG's
// rooting edges reach; it ranks by its own size unless Leave holds it.
func TestTopLeavesOut(t *testing.T) {
	// 0 → 1 → 2 (sizes 1); node 3, of size 5, was reached by 1 → 3 and holds 3 → 2.
	g := graphtest.MustFromEdges(t, 4, [2]uint32{0, 1}, [2]uint32{1, 2}, [2]uint32{1, 3}, [2]uint32{3, 2})
	g.SetSize(3, 5)
	skip := heapgraph.NewEdgeSet(len(g.Succ))
	skip.Add(2) // 1 → 3
	skip.Add(3) // 3 → 2
	s := dynsize.New(g, skip)
	if top := s.Top(1); len(top) != 1 || s.Rep(top[0].Comp) != 3 {
		t.Fatalf("without Leave the cut-off node ranks first by its size: %+v", top)
	}
	s.Leave = dynsize.NewSet(s.DAG.N())
	s.Leave.Add(s.Comp[3])
	top := s.Top(3)
	for _, r := range top {
		if s.Rep(r.Comp) == 3 {
			t.Errorf("Top ranks the component Leave holds: %+v", top)
		}
	}
	if len(top) != 2 || s.Rep(top[0].Comp) != 1 || top[0].Dynamic != 2 {
		t.Errorf("Top(3) = %+v, want node 1 (dynamic 2), then node 2", top)
	}
}
