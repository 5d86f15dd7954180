package dominators

import (
	"slices"
	"testing"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/heapgraph/graphtest"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

const none = heapgraph.NoNode

func checkIdom(t *testing.T, tr *Tree, want []uint32) {
	t.Helper()
	for v, w := range want {
		if tr.Idom[v] != w {
			t.Errorf("idom(%d) = %d, want %d", v, int32(tr.Idom[v]), int32(w))
		}
	}
}

// TestLengauerTarjanExample is Figure 4.1 of the thesis (the example graph of Lengauer and
// Tarjan's paper) with its dominator tree of Figure 4.2.
func TestLengauerTarjanExample(t *testing.T) {
	const R, A, B, C, D, E, F, G, H, I, J, K, L = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
	g := graphtest.MustFromEdges(t, 14,
		[2]uint32{0, R},
		[2]uint32{R, A}, [2]uint32{R, B}, [2]uint32{R, C},
		[2]uint32{A, D},
		[2]uint32{B, A}, [2]uint32{B, D}, [2]uint32{B, E},
		[2]uint32{C, F}, [2]uint32{C, G},
		[2]uint32{D, L},
		[2]uint32{E, H},
		[2]uint32{F, I},
		[2]uint32{G, I}, [2]uint32{G, J},
		[2]uint32{H, E}, [2]uint32{H, K},
		[2]uint32{I, K},
		[2]uint32{J, I},
		[2]uint32{K, I}, [2]uint32{K, R},
		[2]uint32{L, H},
	)
	tr := Compute(g, nil)
	checkIdom(t, tr, []uint32{none, 0, R, R, R, R, R, C, C, R, R, G, R, D})
	ret := tr.Retained(g)
	// R retains everything; C retains F, G, J; D retains L; G retains J.
	for v, want := range map[uint32]uint64{R: 13, C: 4, D: 2, G: 2, A: 1, H: 1, I: 1, K: 1} {
		if ret[v] != want {
			t.Errorf("retained(%d) = %d, want %d", v, ret[v], want)
		}
	}
}

// TestSharedChildren is Figure 2.2: nodes 4–7 are referenced from both 2 and 3, so 2 and 3
// retain only themselves although each reaches five objects.
func TestSharedChildren(t *testing.T) {
	edges := [][2]uint32{{0, 1}, {1, 2}, {1, 3}}
	for c := uint32(4); c <= 7; c++ {
		edges = append(edges, [2]uint32{2, c}, [2]uint32{3, c})
	}
	g := graphtest.MustFromEdges(t, 8, edges...)
	tr := Compute(g, nil)
	checkIdom(t, tr, []uint32{none, 0, 1, 1, 1, 1, 1, 1})
	ret := tr.Retained(g)
	if ret[1] != 7 || ret[2] != 1 || ret[3] != 1 || ret[0] != 7 {
		t.Errorf("retained = %v, want 1→7, 2→1, 3→1, super root→7", ret)
	}
}

func TestBalancedTree(t *testing.T) {
	const n = 1000
	g := graphtest.BalancedTree(n)
	tr := Compute(g, nil)
	ret := tr.Retained(g)
	for i := uint32(1); i <= n; i++ {
		want := uint32(i / 2)
		if tr.Idom[i] != want {
			t.Fatalf("idom(%d) = %d, want %d", i, tr.Idom[i], want)
		}
		// The subtree of i in a complete binary tree: count it level by level.
		var size uint64
		for lo, hi := uint64(i), uint64(i); lo <= n; lo, hi = 2*lo, 2*hi+1 {
			size += min(hi, n) - lo + 1
		}
		if ret[i] != size {
			t.Fatalf("retained(%d) = %d, want %d", i, ret[i], size)
		}
	}
}

// TestListWithData is the thesis's unbalanced tree: every entry dominates the rest of the list.
// Two million entries also prove that nothing recurses per list element.
func TestListWithData(t *testing.T) {
	const entries = 2_000_000
	n := 2 * entries
	g := graphtest.ListWithData(entries)
	tr := Compute(g, nil)
	ret := tr.Retained(g)
	for i := 1; i <= n; i += 2 {
		wantIdom := uint32(i - 2)
		if i == 1 {
			wantIdom = 0
		}
		if tr.Idom[i] != wantIdom || tr.Idom[i+1] != uint32(i) {
			t.Fatalf("idom(entry %d) = %d, idom(data %d) = %d; want %d and %d",
				i, tr.Idom[i], i+1, tr.Idom[i+1], wantIdom, i)
		}
		if ret[i] != uint64(n-i+1) || ret[i+1] != 1 {
			t.Fatalf("retained(entry %d) = %d, retained(data) = %d; want %d and 1", i, ret[i], ret[i+1], n-i+1)
		}
	}
}

// TestDoublyLinkedList: reached from both ends, no entry dominates another; the head retains
// the whole list and each entry only itself and its data.
func TestDoublyLinkedList(t *testing.T) {
	const n = 100_000
	g := graphtest.DoublyLinkedList(n)
	tr := Compute(g, nil)
	ret := tr.Retained(g)
	if ret[1] != 2*n+1 {
		t.Errorf("retained(head) = %d, want %d", ret[1], 2*n+1)
	}
	for k := uint32(0); k < n; k++ {
		e, d := 2+k, n+2+k
		if tr.Idom[e] != 1 || tr.Idom[d] != e || ret[e] != 2 {
			t.Fatalf("entry %d: idom %d, data idom %d, retained %d; want 1, %d, 2", k, tr.Idom[e], tr.Idom[d], ret[e], e)
		}
	}
}

func TestLadderAndTriangle(t *testing.T) {
	const n = 500
	g := graphtest.Ladder(n)
	tr := Compute(g, nil)
	ret := tr.Retained(g)
	for i := uint32(2); i <= n; i++ {
		if tr.Idom[i] != 1 || ret[i] != 1 {
			t.Fatalf("ladder %d: idom %d retained %d, want 1 and 1", i, tr.Idom[i], ret[i])
		}
	}
	if ret[1] != n {
		t.Errorf("ladder: retained(1) = %d, want %d", ret[1], n)
	}

	const rows = 60
	g = graphtest.Triangle(rows)
	tr = Compute(g, nil)
	ret = tr.Retained(g)
	apex := graphtest.TriangleID(0, 0)
	for r := 1; r < rows; r++ {
		for c := 0; c <= r; c++ {
			v := graphtest.TriangleID(r, c)
			wantIdom, wantRet := apex, uint64(1)
			switch c {
			case 0:
				wantIdom, wantRet = graphtest.TriangleID(r-1, 0), uint64(rows-r)
			case r:
				wantIdom, wantRet = graphtest.TriangleID(r-1, r-1), uint64(rows-r)
			}
			if tr.Idom[v] != wantIdom || ret[v] != wantRet {
				t.Fatalf("triangle (%d,%d): idom %d retained %d; want %d and %d", r, c, tr.Idom[v], ret[v], wantIdom, wantRet)
			}
		}
	}
}

// TestSkipAndUnreachable: a skipped edge is not a reference, and what only it reaches is
// unreachable: no dominator, no retained size.
func TestSkipAndUnreachable(t *testing.T) {
	g := graphtest.MustFromEdges(t, 5, [2]uint32{0, 1}, [2]uint32{1, 2}, [2]uint32{1, 3}, [2]uint32{3, 3})
	skip := heapgraph.NewEdgeSet(len(g.Succ))
	skip.Add(2) // 1 -> 3
	tr := Compute(g, skip)
	checkIdom(t, tr, []uint32{none, 0, 1, none, none})
	ret := tr.Retained(g)
	if ret[1] != 2 || ret[3] != 0 || tr.Reachable(3) || !tr.Reachable(0) {
		t.Errorf("retained = %v, reachable(3) = %v; want 1→2 and 3 unreachable", ret, tr.Reachable(3))
	}
}

// listOfClasses is a list of class-1 entries each holding a class-2 object, with its tree, the
// retained sizes and the classes.
func listOfClasses(entries int) (g *heapgraph.Graph, tr *Tree, ret []uint64, classOf []uint32) {
	g = graphtest.ListWithData(entries)
	tr = Compute(g, nil)
	ret = tr.Retained(g)
	classOf = make([]uint32, g.N())
	classOf[0] = none
	for i := 1; i < g.N(); i++ {
		classOf[i] = uint32(2 - i%2) // entries (odd) are class 1, data (even) class 2
	}
	return g, tr, ret, classOf
}

// TestByClass: a list of class-1 entries each holding a class-2 object. Summing every entry's
// retained size would count the tail once per entry; only the topmost instance counts.
func TestByClass(t *testing.T) {
	const entries = 10
	g, tr, ret, classOf := listOfClasses(entries)
	got := tr.ByClass(g, ret, classOf, 3)
	if got[1].Instances != entries || got[1].Shallow != entries || got[1].Retained != 2*entries {
		t.Errorf("entries class: %+v, want %d instances, shallow %d, retained %d", got[1], entries, entries, 2*entries)
	}
	if got[2].Instances != entries || got[2].Retained != entries {
		t.Errorf("data class: %+v, want %d instances retaining %d", got[2], entries, entries)
	}
	if got[0].Instances != 0 || got[0].Retained != 0 {
		t.Errorf("empty class: %+v", got[0])
	}
}

// Down a chain of one class retaining the heap, the split into tasks goes maxSplit nodes deep;
// the path above each task must name each class once, not once per node of the chain, or the
// split and every task spend time quadratic in its length.
func TestByClassSplitPathsHoldEachClassOnce(t *testing.T) {
	const entries = 20000
	g, tr, ret, classOf := listOfClasses(entries)
	off, kids := tr.Children()
	w := byClassWalk{g: g, retained: ret, classOf: classOf, off: off, kids: kids, limit: ret[0] / splitShare}
	tasks, paths := w.split(newByClass(3))
	if len(tasks) < maxSplit/2 {
		t.Fatalf("%d tasks: the chain was not split", len(tasks))
	}
	for _, task := range tasks {
		seen := map[uint32]bool{}
		for p := task.path; p >= 0; p = paths[p].up {
			if seen[paths[p].class] {
				t.Fatalf("task at node %d: class %d twice on its path", task.node, paths[p].class)
			}
			seen[paths[p].class] = true
		}
	}
	got := tr.ByClass(g, ret, classOf, 3)
	if got[1].Instances != entries || got[1].Retained != 2*entries || got[2].Retained != entries {
		t.Errorf("by class %+v, want %d entries retaining %d and data retaining %d", got, entries, 2*entries, entries)
	}
}

func TestChildren(t *testing.T) {
	g := graphtest.BalancedTree(7)
	off, kids := Compute(g, nil).Children()
	if got := kids[off[1]:off[2]]; len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Errorf("children of 1 = %v, want [2 3]", got)
	}
	if off[5] != off[4] {
		t.Errorf("leaf 4 has children %v", kids[off[4]:off[5]])
	}
}

// On random graphs every child list holds exactly the nodes with that immediate dominator, in
// preorder, grouping by class matches its definition, and gives the same after ReleaseNodes as
// before it.
func TestChildrenAndReleaseNodes(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		n := 2 + int(seed%60)
		g := graphtest.Random(seed, n, int(seed%4+1)*n, 5)
		tr := Compute(g, nil)
		off, kids := tr.Children()
		for d := 0; d < n; d++ {
			var want []uint32
			for _, v := range tr.Order[1:] {
				if tr.Idom[v] == uint32(d) {
					want = append(want, v)
				}
			}
			if got := kids[off[d]:off[d+1]]; !slices.Equal(got, want) {
				t.Fatalf("seed %d: children of %d = %v, want %v (preorder)", seed, d, got, want)
			}
		}
		if int(off[n]) != len(tr.Order)-1 {
			t.Fatalf("seed %d: %d children in all, want %d", seed, off[n], len(tr.Order)-1)
		}
		classOf := make([]uint32, n)
		classOf[0] = none
		for v := 1; v < n; v++ {
			classOf[v] = uint32(v % 3)
		}
		ret := tr.Retained(g)
		before := tr.ByClass(g, ret, classOf, 3)
		// A class retains what its topmost instances do: those with no dominator of their class.
		var instances, shallow, retained [3]uint64
		for _, v := range tr.Order[1:] {
			c := classOf[v]
			instances[c]++
			shallow[c] += g.SizeOf(v)
			top := true
			for d := tr.Idom[v]; d != 0; d = tr.Idom[d] {
				top = top && classOf[d] != c
			}
			if top {
				retained[c] += ret[v]
			}
		}
		for c, r := range before {
			if r.Instances != instances[c] || r.Shallow != shallow[c] || r.Retained != retained[c] {
				t.Fatalf("seed %d: class %d has %d instances of %d bytes retaining %d, want %d of %d retaining %d",
					seed, c, r.Instances, r.Shallow, r.Retained, instances[c], shallow[c], retained[c])
			}
		}
		tr.ReleaseNodes()
		if after := tr.ByClass(g, ret, classOf, 3); !slices.Equal(before, after) {
			t.Fatalf("seed %d: by class %v after ReleaseNodes, %v before", seed, after, before)
		}
	}
}

// A Scratch that spills keeps the preorder in a temporary file through the semidominator loop;
// the tree must come out the same as with everything in memory.
func TestSpillingScratchGivesTheSameTree(t *testing.T) {
	graphs := []*heapgraph.Graph{graphtest.DoublyLinkedList(500), graphtest.Triangle(30), graphtest.ListWithData(300)}
	for seed := int64(1); seed <= 20; seed++ {
		graphs = append(graphs, graphtest.Random(seed, 200, 600, 9))
	}
	for i, g := range graphs {
		want := Compute(g, nil)
		got, err := ComputeWith(g, nil, &memory.Scratch{Spill: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Idom, want.Idom) || !slices.Equal(got.Order, want.Order) {
			t.Fatalf("graph %d: spilling changed the tree: idom %v, want %v", i, got.Idom, want.Idom)
		}
	}
}

// Listed by one core or split between two by the edges' sources, the predecessor lists give the
// same tree: the split's second array of counts and cursors must place every edge in its list.
// A hub that every node refers to (a class object) gets edges from both halves.
func TestSplitPredecessorListsGiveTheSameTree(t *testing.T) {
	for seed := int64(1); seed <= 60; seed++ {
		n := 3 + int(seed*7%300)
		g := graphtest.Random(seed, n, 3*n, 5)
		// Every node refers to the last one too, as instances to their class.
		var off, succ []uint32
		for v := 0; v < n; v++ {
			off = append(off, uint32(len(succ)))
			succ = append(succ, g.Successors(uint32(v))...)
			if v > 0 {
				succ = append(succ, uint32(n-1))
			}
		}
		off = append(off, uint32(len(succ)))
		g = &heapgraph.Graph{Off: off, Succ: succ, Size: g.Size}
		var trees [2]*Tree
		for i, split := range []bool{false, true} {
			s := DepthFirst(g, nil, nil)
			s.ListPredecessors(g, nil, split)
			tr, err := s.Finish()
			if err != nil {
				t.Fatal(err)
			}
			trees[i] = tr
		}
		if !slices.Equal(trees[0].Idom, trees[1].Idom) || !slices.Equal(trees[0].Order, trees[1].Order) {
			t.Fatalf("seed %d: split lists give idom %v, one core %v", seed, trees[1].Idom, trees[0].Idom)
		}
		if want := Compute(g, nil); !slices.Equal(want.Idom, trees[0].Idom) {
			t.Fatalf("seed %d: idom %v, want %v", seed, trees[0].Idom, want.Idom)
		}
	}
}
