package dynsize

import (
	"reflect"
	"testing"

	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// The DAG laid out without grouping nodes by component must be the one the definition gives:
// per component, the targets of its members' edges in node and edge order, each first
// appearance kept, and after component 0's real edges one edge to each component that has no
// predecessor.
func TestCondenseMatchesDefinition(t *testing.T) {
	for seed := int64(1); seed <= 300; seed++ {
		n := 1 + int(seed%50)
		g := heapgraph.Random(seed, n, int(seed%4+1)*n, 9)
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
	g := heapgraph.DoublyLinkedList(entries)
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
		g := heapgraph.Random(seed, n, int(seed%4+1)*n, 9)
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
	g := heapgraph.DoublyLinkedList(entries)
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
	g := heapgraph.Chain(objects)
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
	for _, c := range heapgraph.BenchGraphs(3_000_000) {
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
		g := heapgraph.Random(seed, n, 3*n, 9)
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
