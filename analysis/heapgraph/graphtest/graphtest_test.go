package graphtest

import (
	"testing"

	"github.com/heapledger/heapledger/analysis/heapgraph"
)

func TestGenerators(t *testing.T) {
	for _, c := range []struct {
		name        string
		g           *heapgraph.Graph
		nodes, edge int
	}{
		{"BalancedTree", BalancedTree(7), 8, 7},
		{"ListWithData", ListWithData(3), 7, 1 + 3 + 2},
		{"DoublyLinkedList", DoublyLinkedList(3), 8, 1 + 2 + 4 + 3},
		{"Ladder", Ladder(4), 5, 1 + 3 + 2},
		{"Triangle", Triangle(3), 7, 1 + 6},
	} {
		if c.g.N() != c.nodes || len(c.g.Succ) != c.edge {
			t.Errorf("%s: %d nodes and %d edges, want %d and %d", c.name, c.g.N(), len(c.g.Succ), c.nodes, c.edge)
		}
		if c.g.Size[0] != 0 || c.g.TotalSize() != uint64(c.nodes-1) {
			t.Errorf("%s: super root size %d, total %d; want 0 and one per object", c.name, c.g.Size[0], c.g.TotalSize())
		}
	}
	a, b := Random(7, 50, 100, 9), Random(7, 50, 100, 9)
	if a.String() != b.String() {
		t.Error("Random is not deterministic for a seed")
	}
}
