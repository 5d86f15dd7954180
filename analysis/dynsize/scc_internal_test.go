package dynsize

import (
	"math/rand"
	"reflect"
	"runtime"
	"testing"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/heapgraph/graphtest"
)

// The DAG laid out without grouping nodes by component must be the one the definition gives:
// per component, the targets of its members' edges in node and edge order, each first
// appearance kept, and after component 0's real edges one edge to each component that has no
// predecessor.
func TestCondenseMatchesDefinition(t *testing.T) {
	for seed := int64(1); seed <= 300; seed++ {
		n := 1 + int(seed%50)
		g := graphtest.Random(seed, n, int(seed%4+1)*n, 9)
		var skip heapgraph.EdgeSet
		if seed%3 == 0 {
			skip = everyNth(g, 1, 4)
		}
		comp, count := components(g, skip, nil, nil)
		lists := make([][]uint32, count)
		sizes := make([]uint64, count)
		hasPred := make([]bool, count)
		for c := 0; c < count; c++ {
			seen := map[uint32]bool{}
			for v := 0; v < n; v++ {
				if comp[v] != uint32(c) {
					continue
				}
				sizes[c] += g.SizeOf(uint32(v))
				for e := g.Off[v]; e < g.Off[v+1]; e++ {
					if d := comp[g.Succ[e]]; !skip.Has(e) && d != uint32(c) {
						hasPred[d] = true
						if !seen[d] {
							seen[d] = true
							lists[c] = append(lists[c], d)
						}
					}
				}
			}
		}
		wantRoot := uint32(len(lists[0]))
		for d := 1; d < count; d++ {
			if !hasPred[d] {
				lists[0] = append(lists[0], uint32(d))
			}
		}
		var s Sizes
		dag, root := condense(g, skip, comp, count, nil, &s)
		if dag.N() != count || root != wantRoot {
			t.Fatalf("seed %d: %d components with %d root edges, want %d with %d", seed, dag.N(), root, count, wantRoot)
		}
		members := make([]uint32, count)
		for _, c := range comp {
			members[c]++
		}
		big, largest := 0, uint32(0)
		for _, m := range members {
			if m > 1 {
				big++
			}
			largest = max(largest, m)
		}
		if s.BigComponents != big || s.LargestComp != largest {
			t.Fatalf("seed %d: %d components of more than one, the largest of %d; want %d, %d", seed, s.BigComponents, s.LargestComp, big, largest)
		}
		for c := 0; c < count; c++ {
			if got := dag.Successors(uint32(c)); !reflect.DeepEqual(append([]uint32{}, got...), append([]uint32{}, lists[c]...)) {
				t.Fatalf("seed %d: component %d has edges to %v, want %v", seed, c, got, lists[c])
			}
		}
		dag, _ = Condense(g, skip, comp, count)
		for c, want := range sizes {
			if got := dag.SizeOf(uint32(c)); got != want {
				t.Fatalf("seed %d: component %d has size %d, want %d", seed, c, got, want)
			}
		}
	}
}

// everyNth skips edges first, first+step, ... of g: a fixed sprinkling of skipped (weak) edges.
func everyNth(g *heapgraph.Graph, first, step uint32) heapgraph.EdgeSet {
	skip := heapgraph.NewEdgeSet(len(g.Succ))
	for e := first; e < uint32(len(g.Succ)); e += step {
		skip.Add(e)
	}
	return skip
}

// A search within a stack budget finds what an unlimited one finds when the budget holds its
// stacks, and gives up when it does not: on a doubly linked list, whose search goes one entry
// deeper per entry (a frame each) and keeps every entry waiting for the list's one component.
func TestSearchWithinBudget(t *testing.T) {
	const entries = 30000
	g := graphtest.DoublyLinkedList(entries)
	want := Search(g, nil, nil)
	// The deepest path: the head, every entry and the last entry's data object (node 0 is
	// searched last, the data objects are leaves). Entries wait on the second stack only as the
	// first comes down, a frame (12 bytes) for each entry that waits (4).
	need := int64(entries+2) * 12
	for _, tc := range []struct {
		budget int64
		found  bool
	}{{0, true}, {need, true}, {need + 1, true}, {need - stackCheck*12 - 1, false}, {entries * 10, false}, {4096, false}} {
		got := SearchWithin(g, nil, nil, NewStackRoom(tc.budget))
		if (got != nil) != tc.found {
			t.Fatalf("budget %d: found %v, want %v", tc.budget, got != nil, tc.found)
		}
		if got != nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("budget %d: the search within it found other components", tc.budget)
		}
	}
	// A random graph's search within a budget is the unlimited one's, whatever gives up or not.
	for seed := int64(1); seed <= 200; seed++ {
		n := 2 + int(seed%60)
		g := graphtest.Random(seed, n, int(seed%4+1)*n, 9)
		want := Search(g, nil, nil)
		if got := SearchWithin(g, nil, nil, NewStackRoom(int64(seed%7)*16)); got != nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: the search within a budget found other components", seed)
		}
	}
}

// A room lowered by Hold holds what the stacks held and the bytes asked for (and what the search
// may push before it looks again): the search then finds the components if they fit, and gives
// up if they do not.
func TestStackRoomHold(t *testing.T) {
	const entries = 30000
	g := graphtest.DoublyLinkedList(entries)
	need := int64(entries+2) * 12
	for _, tc := range []struct {
		room, more int64
		found      bool
	}{
		{1 << 30, need, true},
		{1 << 30, need / 2, false},
		{0, need, true}, // no limit: Hold sets one
		{0, 4096, false},
		{need / 2, need, false}, // Hold never raises a room
	} {
		room := NewStackRoom(tc.room)
		extra := room.Hold(tc.more)
		if want := min(tc.more+holdSlack, max(tc.room, 0)); tc.room > 0 && extra != want || tc.room == 0 && extra != tc.more+holdSlack {
			t.Errorf("room %d, Hold(%d) = %d", tc.room, tc.more, extra)
		}
		if got := SearchWithin(g, nil, nil, room); (got != nil) != tc.found {
			t.Errorf("room %d, Hold(%d): found %v, want %v", tc.room, tc.more, got != nil, tc.found)
		}
	}
}

// A room lowered while the search runs stops it: on a chain of a million objects, whose stacks
// grow by a frame per object, the room is lowered once the stacks hold 64 KB.
func TestStackRoomHoldWhileSearching(t *testing.T) {
	const objects = 1_000_000
	g := graphtest.Chain(objects)
	room := NewStackRoom(1 << 30)
	// Once the stacks hold 64 KB, the search waits while another goroutine lowers its room: it
	// could otherwise finish before that goroutine ran at all.
	extra := int64(-1)
	defer func() { stacksWeighed = nil }()
	stacksWeighed = func(held int64) {
		if held >= 64<<10 && extra < 0 {
			lowered := make(chan int64)
			go func() { lowered <- room.Hold(4096) }()
			extra = <-lowered
		}
	}
	if SearchWithin(g, nil, nil, room) != nil {
		t.Error("the search went on past a room lowered to 64 KB and 4 KB more")
	}
	if extra != 4096+holdSlack {
		t.Errorf("Hold gave %d bytes beyond what the stacks held, want %d", extra, 4096+holdSlack)
	}
}

// BenchmarkComponents measures the components' search alone (which runs beside the dominators'
// depth-first search) on graphs of 3 million nodes.
func BenchmarkComponents(b *testing.B) {
	for _, c := range graphtest.BenchGraphs(3_000_000) {
		b.Run(c.Name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				components(c.Graph, nil, nil, nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Graph.N()), "ns/node")
		})
	}
}

// Component sizes past what a 32-bit count of size units holds go to the DAG's map of big sizes,
// and sum exactly.
func TestComponentSizesPastBigSize(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		n := 50 + int(seed*13%400)
		g := graphtest.Random(seed, n, 3*n, 9)
		for v := 1; v < n; v += 3 {
			g.SetSize(uint32(v), uint64(heapgraph.BigSize)<<g.SizeShift/2+uint64(v)<<g.SizeShift) // two make a big sum
		}
		for v := 2; v < n; v += 7 {
			g.SetSize(uint32(v), 1<<40+uint64(v)) // big on its own, and not in whole units
		}
		comp, count := components(g, nil, nil, nil)
		want := make([]uint64, count)
		for v, c := range comp {
			want[c] += g.SizeOf(uint32(v))
		}
		dag, _ := Condense(g, nil, comp, count)
		for c := range count {
			if got := dag.SizeOf(uint32(c)); got != want[c] {
				t.Fatalf("seed %d: component %d has size %d, want %d", seed, c, got, want[c])
			}
		}
	}
}

// The points worked out beside the walks, a block at a time, must leave the walks as the points
// worked out first do: the same points, hub, exact sizes and ranking. Blocks of 64 components
// put the walks' waiting to work on graphs of a few thousand.
func TestPointsBesideWalks(t *testing.T) {
	defer func(b int) { pointsBlock = b }(pointsBlock)
	pointsBlock = 64
	// On one core the points are worked out at once, before the hub is picked.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		pointsBesideWalks(t)
	}
}

func pointsBesideWalks(t *testing.T) {
	hubs, pointHubs := 0, 0
	for seed := int64(1); seed <= 60; seed++ {
		g := heapLike(seed, 2000+int(seed*97%6000))
		var skip heapgraph.EdgeSet
		if seed%4 == 0 {
			skip = everyNth(g, 1, 5)
		}
		known := Prepare(g, skip, nil)
		known.Weigh(g, nil)
		known.WalkAndBound(nil)
		beside := Condensed(g, skip, nil)
		if seed/2%2 == 0 { // points started by DominateAndWeigh, or by WalkAndBound
			beside.DominateAndWeigh(g, nil, make([]uint32, beside.DAG.N()), true)
		} else {
			beside.DominateAndWeigh(g, nil, make([]uint32, beside.DAG.N()), false)
			if beside.DAP != nil {
				t.Fatalf("seed %d: DominateAndWeigh worked the points out itself", seed)
			}
		}
		beside.WalkAndBound(nil)
		if !reflect.DeepEqual(known.DAP, beside.DAP) || known.Hub != beside.Hub {
			t.Fatalf("seed %d: points beside the walks differ (hub %d, want %d)", seed, beside.Hub, known.Hub)
		}
		for c := uint32(0); c < uint32(known.DAG.N()); c++ {
			if known.DAP.Has(c) && known.Component(c) != beside.Component(c) {
				t.Fatalf("seed %d: point %d: %d beside the walks, %d after", seed, c, beside.Component(c), known.Component(c))
			}
		}
		if a, b := known.Top(20), beside.Top(20); !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: top %v beside the walks, %v after", seed, b, a)
		}
		if known.DAG.N() < 8*pointsBlock {
			t.Fatalf("seed %d: %d components, too few for the walks to wait on the points", seed, known.DAG.N())
		}
		if known.Hub != heapgraph.NoNode {
			hubs++
		} else if known.hubPicked {
			pointHubs++
		}
	}
	// Both ways a hub can go: kept, and dropped as a point once the points are known.
	if hubs == 0 || pointHubs == 0 {
		t.Fatalf("%d graphs kept their hub, %d dropped it as a point: want some of each", hubs, pointHubs)
	}
}

// heapLike is a random graph shaped like a heap: mostly references to objects made later (a
// DAG of many components), a few back references making small cycles, many GC roots, and one
// object far bigger than the rest, the hub's likely home.
func heapLike(seed int64, n int) *heapgraph.Graph {
	r := rand.New(rand.NewSource(seed))
	b := heapgraph.NewBuilder(n)
	// The big object, and on even seeds the only way to a chain of objects at the end, which
	// makes it a dominating articulation point.
	big, private := uint32(1+r.Intn(n-10)), seed%2 == 0
	last := n - 5 // the chain's first object
	for v := 1; v < n; v++ {
		b.SetSize(uint32(v), uint64(1+r.Intn(9)))
		if r.Intn(40) == 0 && v < last {
			b.AddEdge(0, uint32(v))
		}
		if v >= last {
			if v+1 < n {
				b.AddEdge(uint32(v), uint32(v+1))
			}
			continue
		}
		if private && uint32(v) == big {
			b.AddEdge(uint32(v), uint32(last))
			continue
		}
		for range 1 + r.Intn(3) {
			if w := v + 1 + r.Intn(60); w < last {
				b.AddEdge(uint32(v), uint32(w))
			}
		}
		if r.Intn(20) == 0 && v > 10 {
			b.AddEdge(uint32(v), uint32(v-1-r.Intn(10)))
		}
	}
	b.AddEdge(0, 1)
	b.AddEdge(0, big)
	b.SetSize(big, 100000)
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}
