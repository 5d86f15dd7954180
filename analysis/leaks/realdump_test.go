package leaks

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/heapdump"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/fixtures/heapdumps"
	"github.com/heapledger/heapledger/internal/ddmin"
)

// TestRealDump analyses the fixture program's heap dump: retained sizes from the dominator tree
// must agree with removing the object and weighing what becomes unreachable, and the planted leak
// must be the top suspect.
func TestRealDump(t *testing.T) {
	d, err := heapdump.Load(heapdumps.Dump(t), heapdump.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, weak := d.Graph, heapgraph.EdgeSet(d.Weak)
	// The class objects from the kinds, not from the Dump's own set, which the CLI passes.
	classes := heapgraph.NewEdgeSet(g.N())
	for v, k := range d.Kind {
		if k == heapdump.KindClass {
			classes.Add(uint32(v))
		}
	}
	in := Input{Graph: g, Weak: weak, ClassOf: d.ClassOf, NumClasses: len(d.Classes), ClassObjects: classes}
	rep := Analyze(in, DefaultOptions)

	tree := dominators.Compute(g, weak)
	ret := tree.Retained(g)
	// The slow computation walks the whole heap per object: check the top objects and a spread
	// of others (every 97th), which covers lists, trees, maps, cycles, arrays and classes.
	sample := map[uint32]bool{}
	for _, o := range rep.TopRetained {
		sample[o.Node] = true
	}
	for v := 1; v < g.N(); v += 97 {
		sample[uint32(v)] = true
	}
	for v := range sample {
		if slow := ddmin.SlowRetained(g, weak, v); ret[v] != slow {
			t.Errorf("%s: retained %d, by removal %d", d.Describe(v), ret[v], slow)
		}
	}
	for _, o := range rep.TopRetained {
		if o.Retained != ret[o.Node] {
			t.Errorf("report says %s retains %d, dominator tree %d", d.Describe(o.Node), o.Retained, ret[o.Node])
		}
		if slow := ddmin.SlowDynamic(g, dynamicSkip(nil, g, weak, in.ClassObjects), o.Node); o.Dynamic != slow {
			t.Errorf("%s: dynamic size %d, by reachability %d", d.Describe(o.Node), o.Dynamic, slow)
		}
	}

	if len(rep.Suspects) == 0 {
		t.Fatal("no suspects")
	}
	s := rep.Suspects[0]
	if d.Describe(s.Node) != fmt.Sprintf("class %s @ 0x%x", heapdumps.LeakHolder, d.ObjectID(s.Node)) {
		t.Errorf("top suspect %s, want the class %s", d.Describe(s.Node), heapdumps.LeakHolder)
	}
	// Every leaked item hangs directly below the accumulation point in the dominator tree.
	off, kids := tree.Children()
	items := 0
	for _, k := range kids[off[s.Accumulation.Node]:off[s.Accumulation.Node+1]] {
		if d.ClassName(k) == heapdumps.LeakClass {
			items++
		}
	}
	if items != 2000 {
		t.Errorf("accumulation point %s directly dominates %d leaked items, want 2000", d.Describe(s.Accumulation.Node), items)
	}
}

// TestRealDumpSpilling runs the analysis as heap analyze does, with the Dump parked and the
// columns moving out to temporary files between phases: the report must be the in-memory one,
// and the Dump must name objects as before once everything is back.
func TestRealDumpSpilling(t *testing.T) {
	d, err := heapdump.Load(heapdumps.Dump(t), heapdump.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Analyze(Input{Graph: d.Graph, Weak: heapgraph.EdgeSet(d.Weak), ClassOf: d.ClassOf,
		NumClasses: len(d.Classes), ClassObjects: d.ClassObjects()}, DefaultOptions)
	names := map[uint32]string{}
	for _, o := range want.TopRetained {
		names[o.Node] = d.Describe(o.Node)
	}
	in := &Input{Graph: d.Graph, Weak: heapgraph.EdgeSet(d.Weak), ClassOf: d.ClassOf,
		NumClasses: len(d.Classes), ClassObjects: d.ClassObjects()}
	d.Weak, d.ClassOf = nil, nil
	d.Park()
	opt := DefaultOptions
	opt.Spill = true
	got, err := Run(in, opt)
	if err != nil {
		t.Fatal(err)
	}
	d.Weak, d.ClassOf = []uint64(in.Weak), in.ClassOf
	if err := d.Unpark(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("spilling run reported\n%+v\nwant\n%+v", got, want)
	}
	for v, name := range names {
		if d.Describe(v) != name {
			t.Errorf("node %d is %s after the run, was %s", v, d.Describe(v), name)
		}
	}
}
