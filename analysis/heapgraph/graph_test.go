package heapgraph

import (
	"strings"
	"testing"
)

func TestBuilderKeepsEdgeOrderAndDuplicates(t *testing.T) {
	b := NewBuilder(4)
	b.SetSize(2, 7)
	for _, e := range [][2]uint32{{2, 3}, {0, 1}, {1, 2}, {2, 1}, {1, 2}} {
		b.AddEdge(e[0], e[1])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Successors(1); len(got) != 2 || got[0] != 2 || got[1] != 2 {
		t.Errorf("successors of 1 = %v, want the duplicate edge kept: [2 2]", got)
	}
	if got := g.Successors(2); len(got) != 2 || got[0] != 3 || got[1] != 1 {
		t.Errorf("successors of 2 = %v, want insertion order [3 1]", got)
	}
	from, to := g.Edges()
	if len(from) != 5 || from[0] != 0 || to[0] != 1 || from[4] != 2 || to[4] != 1 {
		t.Errorf("Edges() = %v %v", from, to)
	}
	if g.TotalSize() != 7 || g.N() != 4 {
		t.Errorf("N = %d, TotalSize = %d; want 4 and 7", g.N(), g.TotalSize())
	}
	if s := g.String(); !strings.Contains(s, "2->3 2->1") {
		t.Errorf("String() = %q", s)
	}
}

func TestBuilderRejectsUnknownNodes(t *testing.T) {
	b := NewBuilder(3)
	b.AddEdge(1, 3)
	if _, err := b.Build(); err == nil || !strings.Contains(err.Error(), "1 -> 3") {
		t.Errorf("edge to node 3 of a 3-node graph: err = %v, want one naming the edge", err)
	}
}

func TestEdgeSet(t *testing.T) {
	var none EdgeSet
	if none.Has(5) || none.Count() != 0 {
		t.Error("a nil set must hold nothing")
	}
	s := NewEdgeSet(130)
	for _, e := range []uint32{0, 63, 64, 129} {
		s.Add(e)
	}
	if !s.Has(63) || !s.Has(64) || s.Has(65) || s.Count() != 4 {
		t.Errorf("set %x: Has(63)=%v Has(64)=%v Has(65)=%v Count=%d", s, s.Has(63), s.Has(64), s.Has(65), s.Count())
	}
}

// Sizes that are no whole number of units, or too many units for 32 bits, must come back exact,
// also when sums of sizes cross the limit.
func TestSizesBeyondUnits(t *testing.T) {
	g := &Graph{Off: make([]uint32, 5), Size: make([]uint32, 4), SizeShift: 3}
	huge := uint64(BigSize) << 3 // one unit more than fits
	for _, c := range []struct {
		n    uint32
		size uint64
	}{{1, 24}, {2, 13}, {3, huge}} {
		g.SetSize(c.n, c.size)
		if got := g.SizeOf(c.n); got != c.size {
			t.Errorf("size of %d = %d, want %d", c.n, got, c.size)
		}
	}
	if g.Size[1] != 3 || len(g.Big) != 2 {
		t.Errorf("24 bytes stored as %d units with %d big sizes; want 3 units and the other two big", g.Size[1], len(g.Big))
	}
	g.AddSize(1, huge-24)
	g.AddSize(2, 3)
	g.AddSize(3, 8)
	if g.SizeOf(1) != huge || g.SizeOf(2) != 16 || g.SizeOf(3) != huge+8 {
		t.Errorf("sums %d, %d, %d; want %d, 16, %d", g.SizeOf(1), g.SizeOf(2), g.SizeOf(3), huge, huge+8)
	}
	g.SetSize(2, 16) // back in units: the big entry goes
	if g.Size[2] != 2 || len(g.Big) != 2 || g.TotalSize() != 2*huge+24 {
		t.Errorf("after resetting node 2: %d units, %d big sizes, total %d", g.Size[2], len(g.Big), g.TotalSize())
	}
}
