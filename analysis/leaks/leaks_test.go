package leaks

import (
	"math/rand"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/ddmin"
	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// plantedLeak builds a small heap with a leak: a static map (class object 1 → map 2 → table 3)
// holding 1000 entries with a value each, a thread (root 4) holding a little, and a weak
// reference (root 5) whose referent is the table, offering a shorter but weak path to it.
// Node classes: 0 none, 1 class object, 2 map, 3 table, entries 4, values 5, others 6.
func plantedLeak(t *testing.T) (Input, map[string]uint32) {
	t.Helper()
	const entries = 1000
	n := 6 + 2*entries + 3
	b := heapgraph.NewBuilder(n)
	classOf := make([]uint32, n)
	classOf[0] = heapgraph.NoNode
	set := func(v uint32, size uint64, class uint32) { b.SetSize(v, size); classOf[v] = class }
	set(1, 100, 1) // class object with the static field
	set(2, 48, 2)  // the map
	set(3, 16+4*entries, 3)
	set(4, 120, 6) // thread
	set(5, 32, 6)  // weak reference
	b.AddEdge(0, 5)
	b.AddEdge(0, 1)
	b.AddEdge(0, 4)
	b.AddEdge(1, 2)
	b.AddEdge(2, 3)
	b.AddEdge(5, 3) // edge 5→3 is the weak referent
	for i := uint32(0); i < entries; i++ {
		e, v := 6+2*i, 7+2*i
		set(e, 32, 4)
		set(v, 24, 5)
		b.AddEdge(3, e)
		b.AddEdge(e, v)
	}
	small := uint32(6 + 2*entries)
	for i := uint32(0); i < 3; i++ {
		set(small+i, 40, 6)
		b.AddEdge(4, small+i)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	weak := heapgraph.NewEdgeSet(len(g.Succ))
	for e := g.Off[5]; e < g.Off[6]; e++ {
		weak.Add(e)
	}
	classes := heapgraph.NewEdgeSet(g.N())
	classes.Add(1)
	in := Input{Graph: g, Weak: weak, ClassOf: classOf, NumClasses: 7, ClassObjects: classes}
	return in, map[string]uint32{"class": 1, "map": 2, "table": 3, "thread": 4, "weakref": 5}
}

func TestPlantedLeakIsTopSuspect(t *testing.T) {
	in, node := plantedLeak(t)
	g := in.Graph
	rep := Analyze(in, DefaultOptions)
	total := g.TotalSize()
	if rep.Stats.TotalBytes != total || rep.Stats.Objects != g.N()-1 {
		t.Errorf("stats %+v, want %d bytes in %d objects", rep.Stats, total, g.N()-1)
	}
	if len(rep.Suspects) != 1 {
		t.Fatalf("suspects = %+v, want exactly the class holding the map", rep.Suspects)
	}
	s := rep.Suspects[0]
	if s.Node != node["class"] {
		t.Errorf("top suspect is node %d, want the class object %d", s.Node, node["class"])
	}
	if want := ddmin.SlowRetained(g, in.Weak, s.Node); s.Retained != want {
		t.Errorf("suspect retains %d, by removal %d", s.Retained, want)
	}
	// The map and its table each hold nearly all of it; the table's 1000 entries each hold a
	// thousandth, so the memory accumulates in the table.
	if s.Accumulation.Node != node["table"] {
		t.Errorf("accumulation point is node %d, want the table %d", s.Accumulation.Node, node["table"])
	}
	// The weak reference offers a two-step route to the table; the strong path has three.
	var route []uint32
	for _, st := range s.AccumulationPath {
		route = append(route, st.Node)
	}
	if len(route) != 3 || route[0] != node["class"] || route[1] != node["map"] || route[2] != node["table"] {
		t.Errorf("path to the table = %v, want class → map → table", route)
	}
	for _, st := range s.AccumulationPath {
		if in.Weak.Has(st.Edge) {
			t.Errorf("path uses weak edge %d", st.Edge)
		}
	}
	if len(s.Path) != 1 || s.Path[0].Node != node["class"] || g.Succ[s.Path[0].Edge] != node["class"] {
		t.Errorf("path to the suspect = %+v, want the root edge to the class", s.Path)
	}
	if rep.OnlyWeak.Objects != 0 {
		t.Errorf("OnlyWeak = %+v, want none (the table is also strongly held)", rep.OnlyWeak)
	}
	// Dynamic size: the class object reaches the map, table, entries and values.
	if want := ddmin.SlowDynamic(g, nil, node["map"]) + g.SizeOf(1); s.Dynamic != want {
		t.Errorf("suspect's dynamic size = %d, want %d", s.Dynamic, want)
	}
	if rep.TopRetained[0].Node != node["class"] || rep.TopRetained[1].Node != node["map"] || rep.TopRetained[2].Node != node["table"] {
		t.Errorf("top retained = %+v, want class, map, table first", rep.TopRetained[:3])
	}
	if len(rep.TopRetained) != DefaultOptions.Top {
		t.Errorf("top retained has %d entries, want %d", len(rep.TopRetained), DefaultOptions.Top)
	}
	for _, o := range rep.TopRetained {
		if want := ddmin.SlowRetained(g, in.Weak, o.Node); o.Retained != want {
			t.Errorf("retained(%d) = %d, by removal %d", o.Node, o.Retained, want)
		}
	}
	// By class: the table class retains the whole table; entries (class 4) each hold a value.
	if bc := rep.ByClass; len(bc) == 0 || bc[0].Class != 1 {
		t.Errorf("by class = %+v, want the class object's class first", bc)
	}
	for _, c := range rep.ByClass {
		if c.Class == 4 && (c.Instances != 1000 || c.Retained != 1000*(32+24)) {
			t.Errorf("entries class: %+v, want 1000 instances retaining %d", c, 1000*(32+24))
		}
	}
	if len(rep.TopDynamic) == 0 || rep.TopDynamic[0].Node != node["class"] {
		t.Errorf("top dynamic = %+v, want the class object first", rep.TopDynamic)
	}
}

// TestSharedValuesDynamicVersusRetained is Figure 2.3 of the thesis: a buffer and a list share
// their data objects, so neither retains them but both reach them.
func TestSharedValuesDynamicVersusRetained(t *testing.T) {
	// 1 server → 2 buffer; 3 algorithm → 4 list; buffer and list both hold data 5..14.
	edges := [][2]uint32{{0, 1}, {0, 3}, {1, 2}, {3, 4}}
	for d := uint32(5); d < 15; d++ {
		edges = append(edges, [2]uint32{2, d}, [2]uint32{4, d})
	}
	g, err := heapgraph.FromEdges(15, edges...)
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions
	opt.Threshold = 0.5
	rep := Analyze(Input{Graph: g}, opt)
	if len(rep.Suspects) != 0 {
		t.Errorf("suspects = %+v: nothing retains half of the heap", rep.Suspects)
	}
	if rep.TopDynamic[0].Dynamic != 12 || rep.TopDynamic[2].Dynamic != 11 {
		t.Errorf("top dynamic = %+v, want server and algorithm (12), then buffer and list (11)", rep.TopDynamic)
	}
	for _, o := range rep.TopRetained {
		if o.Node == 2 && (o.Retained != 1 || o.Dynamic != 11) {
			t.Errorf("buffer: retained %d, dynamic %d; want 1 and 11", o.Retained, o.Dynamic)
		}
	}
}

func TestOnlyWeaklyReachable(t *testing.T) {
	g, err := heapgraph.FromEdges(5, [2]uint32{0, 1}, [2]uint32{1, 2}, [2]uint32{2, 3}, [2]uint32{1, 4})
	if err != nil {
		t.Fatal(err)
	}
	weak := heapgraph.NewEdgeSet(len(g.Succ))
	weak.Add(1) // 1 → 2
	opt := DefaultOptions
	opt.DropRatio = 0.4
	rep := Analyze(Input{Graph: g, Weak: weak}, opt)
	if rep.OnlyWeak.Objects != 2 || rep.OnlyWeak.Bytes != 2 {
		t.Errorf("OnlyWeak = %+v, want 2 objects of 2 bytes", rep.OnlyWeak)
	}
	// Node 1 retains itself and 4 only: the weakly held 2 and 3 would be collected anyway.
	if len(rep.Suspects) != 1 || rep.Suspects[0].Node != 1 || rep.Suspects[0].Retained != 2 {
		t.Fatalf("suspects = %+v, want node 1 retaining 2", rep.Suspects)
	}
	if s := rep.Suspects[0]; s.Accumulation.Node != 4 || len(s.AccumulationPath) != 2 {
		t.Errorf("accumulation %d with path %+v; want node 4 by 0 → 1 → 4", s.Accumulation.Node, s.AccumulationPath)
	}
	// Dynamic sizes leave weak references out too: 1 reaches 1 and 4, and 2 reaches 2 and 3.
	dyn := map[uint32]uint64{}
	for _, c := range rep.TopDynamic {
		dyn[c.Node] = c.Dynamic
	}
	if dyn[1] != 2 || dyn[2] != 2 || dyn[4] != 1 {
		t.Errorf("top dynamic = %+v, want nodes 1 and 2 with 2, node 4 with 1", rep.TopDynamic)
	}
}

// TestSplitSuspects: a holder (1) of two big maps (2 and 3) with a small object (4) beside them.
// Neither map holds 70% of the holder, so the holder is its own accumulation point, and both
// maps must be suspects of their own.
func TestSplitSuspects(t *testing.T) {
	b := heapgraph.NewBuilder(5 + 2*100)
	b.AddEdge(0, 1)
	b.AddEdge(0, 4)
	b.AddEdge(1, 2)
	b.AddEdge(1, 3)
	for _, v := range []uint32{1, 2, 3, 4} {
		b.SetSize(v, 10)
	}
	for i := uint32(0); i < 200; i++ {
		b.SetSize(5+i, 10)
		b.AddEdge(2+i%2, 5+i)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	rep := Analyze(Input{Graph: g}, DefaultOptions)
	var got []uint32
	for _, s := range rep.Suspects {
		got = append(got, s.Node)
	}
	if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("suspects %v, want the holder 1 and both maps 2 and 3", got)
	}
	if rep.Suspects[0].Accumulation.Node != 1 || rep.Suspects[1].Accumulation.Node != 2 {
		t.Errorf("accumulation points %d and %d, want 1 (no dominant child) and 2", rep.Suspects[0].Accumulation.Node, rep.Suspects[1].Accumulation.Node)
	}
}

// TestChainAccumulation: a hand-made linked list held by a holder. Each entry holds the rest of
// the list, so without classes the descent runs to the tail; with classes it stops at the head.
func TestChainAccumulation(t *testing.T) {
	const entries = 1000
	list := heapgraph.ListWithData(entries) // entries are odd nodes, data even
	b := heapgraph.NewBuilder(list.N() + 1)
	holder := uint32(list.N())
	b.AddEdge(0, holder)
	b.AddEdge(holder, 1)
	b.SetSize(holder, 1)
	from, to := list.Edges()
	for i := range from {
		if from[i] != 0 {
			b.AddEdge(from[i], to[i])
		}
	}
	for v := 1; v < list.N(); v++ {
		b.SetSize(uint32(v), 1)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	classOf := make([]uint32, g.N())
	classOf[0] = heapgraph.NoNode
	for v := 1; v < g.N(); v++ {
		classOf[v] = uint32(2 - v%2) // entries 1, data 2
	}
	classOf[holder] = 3
	withClasses := Analyze(Input{Graph: g, ClassOf: classOf, NumClasses: 4}, DefaultOptions)
	if s := withClasses.Suspects; len(s) != 1 || s[0].Node != holder || s[0].Accumulation.Node != 1 {
		t.Fatalf("with classes: suspects %+v, want the holder with the list head (1) as accumulation point", s)
	}
	without := Analyze(Input{Graph: g}, DefaultOptions)
	if a := without.Suspects[0].Accumulation.Node; a < 2*entries-20 {
		t.Errorf("without classes the descent should run down the chain, stopped at %d", a)
	}
}

// chainShape describes a heap for the accumulation point search: a holder (class 1) held by a
// root holds a chain of cells whose classes repeat pattern, each period's last cell holding a
// payload beside the next cell; the last cell holds items, directly or, with tailClass set,
// through one object of that class (an array, say).
type chainShape struct {
	pattern   []uint32 // classes of one period of cells, from 2 to 8
	cells     int
	payload   uint64 // bytes; 0: no payload objects
	tailClass uint32
	items     int
	itemSize  uint64
}

// chainNodes names the nodes of a chainHeap and what they retain.
type chainNodes struct {
	holder, head, last, tail uint32
	// chainBytes is what the head retains (the cells, payloads, tail and items); tailBytes what
	// the tail retains (the last cell, without a tail object).
	chainBytes, tailBytes uint64
}

func chainHeap(t *testing.T, s chainShape) (Input, chainNodes) {
	t.Helper()
	const cellSize, payloadClass, itemClass = 16, 9, 10
	payloads := 0
	if s.payload > 0 {
		payloads = s.cells / len(s.pattern)
	}
	n := 2 + s.cells + payloads + s.items
	if s.tailClass != 0 {
		n++
	}
	b := heapgraph.NewBuilder(n)
	classOf := make([]uint32, n)
	classOf[0] = heapgraph.NoNode
	next := uint32(1)
	add := func(from, class uint32, size uint64) uint32 {
		v := next
		next++
		b.AddEdge(from, v)
		b.SetSize(v, size)
		classOf[v] = class
		return v
	}
	var nodes chainNodes
	nodes.holder = add(0, 1, 24)
	v := nodes.holder
	for i := range s.cells {
		v = add(v, s.pattern[i%len(s.pattern)], cellSize)
		nodes.chainBytes += cellSize
		if i == 0 {
			nodes.head = v
		}
		if s.payload > 0 && i%len(s.pattern) == len(s.pattern)-1 {
			add(v, payloadClass, s.payload)
			nodes.chainBytes += s.payload
		}
	}
	nodes.last, nodes.tail, nodes.tailBytes = v, v, cellSize
	if s.tailClass != 0 {
		nodes.tail = add(v, s.tailClass, 16+4*uint64(s.items))
		nodes.tailBytes = 16 + 4*uint64(s.items)
		nodes.chainBytes += nodes.tailBytes
	}
	for range s.items {
		add(nodes.tail, itemClass, s.itemSize)
	}
	nodes.tailBytes += uint64(s.items) * s.itemSize
	nodes.chainBytes += uint64(s.items) * s.itemSize
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return Input{Graph: g, ClassOf: classOf, NumClasses: 11}, nodes
}

// TestLinkedChainAccumulation: a chain whose elements each hold a payload leaves a little of its
// head's memory behind at every step, so the drop comes only near its tail; whatever the number
// of classes the cells alternate between, the accumulation point is the head, retaining the
// whole chain. A chain that carries most of the memory to its end leads on to where it piles up.
func TestLinkedChainAccumulation(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape chainShape
		want  func(chainNodes) (uint32, uint64)
	}{
		{"one class (a singly linked list)", chainShape{pattern: []uint32{2}, cells: 3000, payload: 48}, chainHead},
		{"two classes (Clojure's LazySeq and Cons)", chainShape{pattern: []uint32{2, 3}, cells: 6000, payload: 48}, chainHead},
		{"three classes (node, ArrayList, Object[])", chainShape{pattern: []uint32{2, 3, 4}, cells: 6000, payload: 48}, chainHead},
		{"four classes (node, map, table, entry)", chainShape{pattern: []uint32{2, 3, 4, 5}, cells: 6000, payload: 48}, chainHead},
		// LazySeqs (2) between Cons (3) and ChunkedCons (4) cells in no fixed order, as Clojure's
		// concat makes.
		{"mixed cells", chainShape{pattern: []uint32{2, 3, 2, 3, 2, 4, 2, 4, 2, 4, 2, 3, 2, 4}, cells: 7000, payload: 480}, chainHead},
		// The chain's elements hold 3% of it; the array at its end holds the rest.
		{"one class to a big array", chainShape{pattern: []uint32{2}, cells: 2000, tailClass: 6, items: 1000, itemSize: 1000}, chainTail},
		{"two classes to a big array", chainShape{pattern: []uint32{2, 3}, cells: 2000, tailClass: 6, items: 1000, itemSize: 1000}, chainTail},
		// A list (2) whose array (3) holds one list whose array holds everything: the memory is in
		// the inner array, not spread along the lists.
		{"a list of lists", chainShape{pattern: []uint32{2, 3}, cells: 4, items: 1000, itemSize: 100}, chainTail},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, nodes := chainHeap(t, c.shape)
			rep := Analyze(in, DefaultOptions)
			if len(rep.Suspects) != 1 || rep.Suspects[0].Node != nodes.holder {
				t.Fatalf("suspects %+v, want the holder %d only", rep.Suspects, nodes.holder)
			}
			s := rep.Suspects[0]
			node, retained := c.want(nodes)
			if a := s.Accumulation; a.Node != node || a.Retained != retained {
				t.Errorf("accumulation point %d retaining %d bytes, want %d retaining %d (chain %d..%d)",
					a.Node, a.Retained, node, retained, nodes.head, nodes.last)
			}
			if p := s.AccumulationPath; len(p) == 0 || p[len(p)-1].Node != node {
				t.Errorf("the path to the accumulation point (%d steps) does not end at it", len(p))
			}
		})
	}
}

func chainHead(n chainNodes) (uint32, uint64) { return n.head, n.chainBytes }
func chainTail(n chainNodes) (uint32, uint64) { return n.tail, n.tailBytes }

func TestTopBy(t *testing.T) {
	val := []uint64{9, 5, 7, 7, 0, 1, 8}
	got := topBy(val, 3, func(v uint32) bool { return v != 0 })
	want := []uint32{6, 2, 3}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("topBy = %v, want %v", got, want)
	}
	if got := topBy(val, 0, func(uint32) bool { return true }); len(got) != 0 {
		t.Errorf("topBy(k=0) = %v", got)
	}
}

// Over a heap small enough to be ranked on one core, and over one large enough to be ranked in
// two halves, topBy must give what sorting all gives, ties (many here) to the lower node,
// whatever k, and however the best lie between the halves.
func TestTopByHalves(t *testing.T) {
	for _, n := range []int{5000, 1<<21 + 3} {
		testTopBy(t, n)
	}
}

func testTopBy(t *testing.T, n int) {
	rnd := rand.New(rand.NewSource(7))
	val := make([]uint64, n)
	for i := range val {
		val[i] = uint64(rnd.Intn(1000))
	}
	keep := func(v uint32) bool { return v%5 != 0 }
	var all []uint32
	for v := range val {
		if keep(uint32(v)) && val[v] != 0 {
			all = append(all, uint32(v))
		}
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if val[a] != val[b] {
			return val[a] > val[b]
		}
		return a < b
	})
	for _, k := range []int{0, 1, 7, 100, 5000} {
		want := all[:min(k, len(all))] // all of them when k is more
		if got := topBy(val, k, keep); !slices.Equal(got, want) {
			t.Fatalf("%d nodes: top %d = %v..., want %v...", n, k, got[:min(len(got), 5)], want[:min(len(want), 5)])
		}
	}
}

// TestDegenerateHeaps: an empty heap and a heap that nothing reaches must not trip anything.
func TestDegenerateHeaps(t *testing.T) {
	empty, err := heapgraph.FromEdges(1)
	if err != nil {
		t.Fatal(err)
	}
	rep := Analyze(Input{Graph: empty}, DefaultOptions)
	if rep.Stats.Objects != 0 || len(rep.Suspects) != 0 || len(rep.TopRetained) != 0 || len(rep.TopDynamic) != 0 {
		t.Errorf("empty heap: %+v", rep)
	}
	orphans, err := heapgraph.FromEdges(4, [2]uint32{1, 2}, [2]uint32{2, 1}, [2]uint32{3, 3})
	if err != nil {
		t.Fatal(err)
	}
	rep = Analyze(Input{Graph: orphans}, DefaultOptions)
	if rep.Stats.Objects != 0 || rep.OnlyWeak.Objects != 3 || len(rep.Suspects) != 0 {
		t.Errorf("unreached heap: stats %+v, only weak %+v, suspects %v", rep.Stats, rep.OnlyWeak, rep.Suspects)
	}
	if len(rep.TopDynamic) != 2 || rep.TopDynamic[0].Dynamic != 2 || rep.TopDynamic[0].Members != 2 {
		t.Errorf("unreached heap: top dynamic %+v, want the 1-2 cycle (2) and node 3 (1)", rep.TopDynamic)
	}
}

// Run with spilling moves columns out and back between phases: the report must be Analyze's, and
// every column must be back, with the same contents, when it returns. So with a memory limit
// that leaves no room to search for components beside the dominators' search (1 byte), and
// with none (0), where the two run side by side.
func TestSpillingRunMatchesAnalyze(t *testing.T) {
	leak, _ := plantedLeak(t)
	g, err := heapgraph.FromEdges(5, [2]uint32{0, 1}, [2]uint32{1, 2}, [2]uint32{2, 3}, [2]uint32{1, 4})
	if err != nil {
		t.Fatal(err)
	}
	weak := heapgraph.NewEdgeSet(len(g.Succ))
	weak.Add(1) // 1 → 2: 2 and 3 are held only weakly
	// Without a limit, under one that leaves no room (nothing beside), and under one that leaves
	// all the room (the preorder kept in memory).
	for i, in := range []Input{leak, {Graph: g, Weak: weak}, leak, {Graph: g, Weak: weak}, leak, {Graph: g, Weak: weak}} {
		want := Analyze(in, DefaultOptions)
		g := in.Graph
		off, succ, size := slices.Clone(g.Off), slices.Clone(g.Succ), slices.Clone(g.Size)
		classOf, weak := slices.Clone(in.ClassOf), slices.Clone(in.Weak)
		spilling := in
		opt := DefaultOptions
		opt.Spill = true
		switch i / 2 {
		case 1:
			opt.MemoryLimit = 1
		case 2:
			opt.MemoryLimit = 1 << 40
		}
		got, err := Run(&spilling, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("spilling run reported\n%+v\nwant\n%+v", got, want)
		}
		if !slices.Equal(g.Off, off) || !slices.Equal(g.Succ, succ) || !slices.Equal(g.Size, size) ||
			!slices.Equal(spilling.ClassOf, classOf) || !slices.Equal(spilling.Weak, weak) {
			t.Fatal("a column did not come back as it was")
		}

		// Asked to leave the sizes, edges and weak edges out, Run gives back only the offsets
		// and the classes, copies or (Views) views of their files, and reports the same.
		opt.Leave = Columns{Sizes: true, Succ: true, Weak: true}
		for _, views := range []bool{false, true} {
			left := in
			left.Graph = &heapgraph.Graph{Off: slices.Clone(off), Succ: slices.Clone(succ), Size: slices.Clone(size), SizeShift: g.SizeShift, Big: g.Big}
			left.ClassOf, left.Weak = slices.Clone(classOf), slices.Clone(weak)
			opt.Views = views
			if got, err = Run(&left, opt); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("run leaving columns out (views %v) reported\n%+v\nwant\n%+v", views, got, want)
			}
			if !slices.Equal(left.Graph.Off, off) || !slices.Equal(left.ClassOf, classOf) {
				t.Fatalf("the offsets or the classes did not come back (views %v)", views)
			}
			if left.Graph.Succ != nil || left.Graph.Size != nil || left.Weak != nil {
				t.Fatal("a column left out came back")
			}
		}
	}
}

// A column let go (forget) is one its caller left out: its file closes while it is out, and a
// column still wanted, or in, keeps its own.
func TestForgetLetsGoOnlyColumnsLeftOut(t *testing.T) {
	g := heapgraph.Chain(1000)
	in := &Input{Graph: g, Weak: heapgraph.NewEdgeSet(len(g.Succ))}
	off := slices.Clone(g.Off)
	cols := &parked{on: true}
	defer cols.close()
	cols.park(in, false, false, true)
	cols.forget(Columns{Sizes: true, Succ: true})
	if cols.succ.file != nil || cols.weak.file == nil || cols.offs.file == nil {
		t.Fatal("forget closed other files than the out columns left out")
	}
	if cols.size.file != nil || g.Size == nil {
		t.Fatal("forget touched the sizes, which were in")
	}
	if err := cols.unpark(in, false, false, true); err == nil {
		t.Error("edges let go came back without an error")
	}
	if !slices.Equal(g.Off, off) {
		t.Error("the edge offsets, still wanted, did not come back")
	}
}

// Work runs beside other work only when the process is known to stay under the limit with it.
func TestBeside(t *testing.T) {
	for _, c := range []struct {
		resident, more, limit int64
		want                  bool
	}{{100, 50, 200, true}, {100, 100, 200, true}, {150, 51, 200, false}, {-1, 1, 200, false}} {
		if got := beside(c.resident, c.more, c.limit); got != c.want {
			t.Errorf("beside(%d, %d, %d) = %v", c.resident, c.more, c.limit, got)
		}
	}
}

// Under a memory limit the components' search beside the depth-first search gets what the limit
// leaves for its stacks: on a chain, a frame per object, it finds the components when they fit
// and gives up when they do not, and either way the report is Analyze's. Without the room for a
// megabyte of stacks it does not start.
func TestComponentsBesideWithinLimit(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the search runs beside the other only with two cores")
	}
	const fixed = 100 << 20 // what resident reports here
	defer func(r func() int64) { resident, besideDone = r, nil }(resident)
	resident = func() int64 { return fixed }
	for _, tc := range []struct {
		objects int
		room    int64 // for the stacks
		want    string
	}{
		{50_000, 2 << 20, "found"},    // 50,000 frames: 600 KB
		{300_000, 2 << 20, "gave up"}, // 3.6 MB
		{300_000, 4 << 20, "found"},
		{50_000, minStackRoom - 1, "not started"},
	} {
		g := heapgraph.Chain(tc.objects)
		in := Input{Graph: g}
		want := Analyze(in, DefaultOptions)
		n, e := int64(g.N()), int64(len(g.Succ))
		opt := DefaultOptions
		opt.MemoryLimit = fixed + 20*n + e/4 + tc.room
		got, same := runBeside(t, in, opt, want)
		if got != tc.want {
			t.Errorf("%d objects, %d bytes for the stacks: the search beside %s, want %s", tc.objects, tc.room, got, tc.want)
		}
		if !same {
			t.Errorf("%d objects, %d bytes for the stacks: the report differs from Analyze's", tc.objects, tc.room)
		}
	}
}

// runBeside runs Run on in with opt and tells what became of the components' search beside the
// depth-first search ("found", "gave up" or "not started"), and whether the report is want.
func runBeside(t *testing.T, in Input, opt Options, want *Report) (beside string, same bool) {
	t.Helper()
	beside = "not started"
	besideDone = func(found bool) {
		beside = map[bool]string{true: "found", false: "gave up"}[found]
	}
	rep, err := Run(&in, opt)
	if err != nil {
		t.Fatal(err)
	}
	return beside, reflect.DeepEqual(rep, want)
}

// Dynamic sizes leave out references into class objects, but for the super root's: an instance
// reaches its class, and through the class its statics, without them counting in its dynamic
// size; the class, a GC root, still has its own.
func TestDynamicSizesSkipClassObjects(t *testing.T) {
	// 0 → class 1 (a GC root) → static 4; 0 → thread 2 → instance 3 → its class 1.
	b := heapgraph.NewBuilder(5)
	for v, size := range []uint64{0, 100, 40, 24, 1000} {
		b.SetSize(uint32(v), size)
	}
	for _, e := range [][2]uint32{{0, 1}, {0, 2}, {1, 4}, {2, 3}, {3, 1}} {
		b.AddEdge(e[0], e[1])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	classes := heapgraph.NewEdgeSet(g.N())
	classes.Add(1)
	dynamic := func(rep *Report) map[uint32]uint64 {
		m := map[uint32]uint64{}
		for _, c := range rep.TopDynamic {
			m[c.Node] = c.Dynamic
		}
		return m
	}
	got := dynamic(Analyze(Input{Graph: g, ClassObjects: classes}, DefaultOptions))
	if want := map[uint32]uint64{1: 1100, 2: 64, 3: 24, 4: 1000}; !reflect.DeepEqual(got, want) {
		t.Errorf("dynamic sizes %v, want %v", got, want)
	}
	// Without class objects the thread and the instance reach the class's statics.
	got = dynamic(Analyze(Input{Graph: g}, DefaultOptions))
	if want := map[uint32]uint64{1: 1100, 2: 1164, 3: 1124, 4: 1000}; !reflect.DeepEqual(got, want) {
		t.Errorf("without class objects: dynamic sizes %v, want %v", got, want)
	}
}

// MakeAhead makes as many of the searches' arrays as fit in the room it is given beyond what
// building the graph may take, up to the four the searches take first, and none when not one
// fits.
func TestMakeAheadFitsTheRoom(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("arrays are made ahead only with a core to spare")
	}
	const nodes = 10_000
	per := int64(4 * (nodes + 1))
	for _, tc := range []struct {
		room int64
		want int
	}{
		{aheadSlack(nodes) + per - 1, 0},
		{aheadSlack(nodes) + per, 1},
		{aheadSlack(nodes) + 3*per + per/2, 3},
		{aheadSlack(nodes) + 10*per, aheadArrays},
		{-1, 0},
	} {
		a := MakeAhead(nodes, tc.room)
		got := 0
		if a != nil {
			got = len(a.take(nodes))
		}
		if got != tc.want {
			t.Errorf("room %d: %d arrays made, want %d", tc.room, got, tc.want)
		}
	}
	if MakeAhead(0, 1<<40) != nil {
		t.Error("arrays made for a graph of no nodes")
	}
}

// Arrays made ahead go to the searches, and what of them is resident already counts as such:
// under a memory limit that leaves the components' search too little room for its stacks unless
// the arrays made ahead are counted as resident, it runs beside the depth-first search only
// with them. Arrays made for a smaller graph are not used. The report is Analyze's either way.
func TestRunTakesArraysMadeAhead(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("arrays are made ahead only with a core to spare")
	}
	const fixed = 100 << 20 // what resident reports here, the arrays made ahead included
	defer func(r func() int64) { resident, besideDone = r, nil }(resident)
	resident = func() int64 { return fixed }
	const objects = 200_000 // a list: 3.2 MB of stacks for the components' search, and of arrays made ahead
	g := heapgraph.Chain(objects)
	in := Input{Graph: g}
	want := Analyze(in, DefaultOptions)
	n, e := int64(g.N()), int64(len(g.Succ))
	for _, tc := range []struct {
		name  string
		nodes int // the arrays made ahead are for this many nodes
		want  string
	}{
		{"no arrays made ahead", 0, "not started"},
		{"arrays made ahead", g.N(), "found"},
		{"arrays made for a smaller graph", g.N() - 1, "not started"},
	} {
		opt := DefaultOptions
		// The four arrays' bytes short of what the search needs beside the depth-first
		// search's: they are counted in resident, and with them the room is 4 MB; without,
		// under the megabyte the search is started with.
		opt.MemoryLimit = fixed + 20*n + e/4 + 4<<20 - aheadArrays*4*(n+1)
		var a *Ahead
		if tc.nodes > 0 {
			if a = MakeAhead(tc.nodes, 1<<40); a == nil {
				t.Fatal("no arrays made ahead with all the room in the world")
			}
			<-a.made
			for deadline := time.Now().Add(10 * time.Second); a.faulted.Load() < int64(len(a.arrays))*4*int64(tc.nodes+1); {
				if time.Now().After(deadline) {
					t.Skip("the arrays' pages did not come in (no MADV_POPULATE_WRITE?)")
				}
				time.Sleep(time.Millisecond)
			}
		}
		opt.Ahead = a
		got, same := runBeside(t, in, opt, want)
		if got != tc.want {
			t.Errorf("%s: the search beside %s, want %s", tc.name, got, tc.want)
		}
		if !same {
			t.Errorf("%s: the report differs from Analyze's", tc.name)
		}
	}
}

// apartHeap is a small application heap — a class object (1) holding a list (2) of entries, each
// with a value — beside a profiler's own objects: its class object, a heads array and a doubly
// linked list of one tracking object per entry, whose referent is the entry. The profiler's
// objects are set apart: every edge into or out of them skipped. Entries are labelled by parity
// and values apart in dimension 0, entries and values apart in dimension 1.
func apartHeap(t *testing.T, entries int) (Input, uint64) {
	t.Helper()
	const hlClass, heads = 3, 4
	appFirst := uint32(5)
	trackFirst := appFirst + uint32(2*entries)
	n := int(trackFirst) + entries
	b := heapgraph.NewBuilder(n)
	b.AddEdge(0, 1)
	b.SetSize(1, 100)
	b.AddEdge(1, 2)
	b.SetSize(2, uint64(16+4*entries))
	b.AddEdge(0, hlClass)
	b.SetSize(hlClass, 200)
	b.AddEdge(hlClass, heads)
	b.SetSize(heads, 64)
	b.AddEdge(heads, trackFirst)
	appBytes := uint64(100 + 16 + 4*entries)
	for i := range uint32(entries) {
		e, v, tr := appFirst+2*i, appFirst+2*i+1, trackFirst+i
		b.AddEdge(2, e)
		b.AddEdge(e, v)
		b.SetSize(e, 32)
		b.SetSize(v, 24)
		appBytes += 56
		b.SetSize(tr, 48)
		b.AddEdge(tr, e) // the referent
		if i > 0 {
			b.AddEdge(tr, tr-1)
		}
		if int(i) < entries-1 {
			b.AddEdge(tr, tr+1)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	apart := heapgraph.NewEdgeSet(n)
	for _, v := range []uint32{hlClass, heads} {
		apart.Add(v)
	}
	for v := trackFirst; v < uint32(n); v++ {
		apart.Add(v)
	}
	weak := heapgraph.NewEdgeSet(len(g.Succ))
	cut := 0
	for v := range uint32(n) {
		for e := g.Off[v]; e < g.Off[v+1]; e++ {
			if apart.Has(v) || apart.Has(g.Succ[e]) {
				weak.Add(e)
				cut++
			}
		}
	}
	// Labels 0 and 1: even and odd entries, groups 0 and 1 of dimension 0 and both group 0 of
	// dimension 1; label 2: values, group 2 of dimension 0 and group 1 of dimension 1.
	l := &dominators.Labels{Count: []int{3, 2}, Rate: 1, Off: []uint32{0}, Groups: [][]uint32{{0, 1, 2}, {0, 0, 1}}}
	for i := range uint32(entries) {
		e := appFirst + 2*i
		l.Nodes = append(l.Nodes, e, e+1)
		l.Keys = append(l.Keys, i%2, 2)
		l.Off = append(l.Off, uint32(2*i+1), uint32(2*i+2))
	}
	return Input{Graph: g, Weak: weak, Labels: l, Apart: apart, ApartEdges: cut}, appBytes
}

// TestApartAndLabels: the profiler's objects, set apart, count in no figure (the suspect is the
// application's list, not the profiler's bigger linked list), and the labelled objects' retained
// sizes come per group, for the heap and below the suspect's accumulation point.
func TestApartAndLabels(t *testing.T) {
	const entries = 1000
	in, appBytes := apartHeap(t, entries)
	edges := len(in.Graph.Succ)
	rep := Analyze(in, DefaultOptions)
	if rep.Stats.TotalBytes != appBytes || rep.Stats.Objects != 2+2*entries || rep.Stats.Edges != edges-in.ApartEdges {
		t.Errorf("stats %+v; want %d bytes, %d objects, %d edges", rep.Stats, appBytes, 2+2*entries, edges-in.ApartEdges)
	}
	if rep.OnlyWeak.Objects != 0 {
		t.Errorf("%d objects held only weakly: the profiler's objects were counted there", rep.OnlyWeak.Objects)
	}
	if rep.Stats.Components != 2+2*entries+1 || rep.Stats.BigComponents != 0 {
		t.Errorf("components %d (big %d); want the application's %d and the super root's, and no big one", rep.Stats.Components, rep.Stats.BigComponents, 2+2*entries)
	}
	if len(rep.Suspects) != 1 || rep.Suspects[0].Node != 1 || rep.Suspects[0].Accumulation.Node != 2 {
		t.Fatalf("suspects %+v; want the application's class object, accumulating in its list", rep.Suspects)
	}
	for _, o := range rep.TopRetained {
		if in.Apart.Has(o.Node) {
			t.Errorf("top retained lists node %d, set apart", o.Node)
		}
	}
	for _, c := range rep.TopDynamic {
		if in.Apart.Has(c.Node) {
			t.Errorf("top dynamic lists node %d, set apart", c.Node)
		}
	}
	for what, dims := range map[string][][]dominators.GroupRetained{"heap": rep.ByLabel, "suspect": rep.Suspects[0].Held} {
		if len(dims) != 2 || len(dims[0]) != 3 || len(dims[1]) != 2 {
			t.Fatalf("%s: groups %+v", what, dims)
		}
		byGroup := func(d int) map[uint32]dominators.GroupRetained {
			m := map[uint32]dominators.GroupRetained{}
			for _, o := range dims[d] {
				m[o.Group] = o
			}
			return m
		}
		d0, d1 := byGroup(0), byGroup(1)
		for _, k := range []uint32{0, 1} {
			if o := d0[k]; o.Members != entries/2 || o.Retained != entries/2*56 {
				t.Errorf("%s: entries of parity %d: %+v; want %d members retaining %d", what, k, o, entries/2, entries/2*56)
			}
		}
		if o := d1[0]; o.Members != entries || o.Retained != entries*56 || o.Shallow != entries*32 {
			t.Errorf("%s: entries %+v", what, o)
		}
		for _, o := range []dominators.GroupRetained{d0[2], d1[1]} {
			if o.Members != entries || o.Retained != entries*24 || o.Shallow != entries*24 {
				t.Errorf("%s: values %+v", what, o)
			}
		}
		if dims[0][2].Group != 2 {
			t.Errorf("%s: groups not largest first: %+v", what, dims[0])
		}
	}
}
