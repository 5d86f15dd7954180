package dominators

import (
	"testing"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/heapgraph/graphtest"
)

// TestDAGAgreesWithCompute compares the forward-only DAG algorithm with SEMI-NCA on the thesis's
// DAGs and on long chains, where the jump pointers matter.
func TestDAGAgreesWithCompute(t *testing.T) {
	for name, g := range map[string]*heapgraph.Graph{
		"Ladder":       graphtest.Ladder(5000),
		"Triangle":     graphtest.Triangle(80),
		"BalancedTree": graphtest.BalancedTree(4095),
		"ListWithData": graphtest.ListWithData(300_000),
		// A chain whose every link also points at one sink: each new predecessor of the sink
		// is deep in the tree, the case that makes naive ancestor climbing quadratic.
		"ChainToSink": chainToSink(t, 200_000),
	} {
		want := Compute(g, nil).Idom
		got, err := DAG(g)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for v := range want {
			if got[v] != want[v] {
				t.Fatalf("%s: idom(%d) = %d, SEMI-NCA says %d", name, v, int32(got[v]), int32(want[v]))
			}
		}
	}
}

func chainToSink(t *testing.T, n int) *heapgraph.Graph {
	sink := uint32(n + 1)
	b := heapgraph.NewBuilder(n + 2)
	b.AddEdge(0, 1)
	for i := uint32(1); i <= uint32(n); i++ {
		if i < uint32(n) {
			b.AddEdge(i, i+1)
		}
		b.AddEdge(i, sink)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestDAGRejectsBackwardEdges(t *testing.T) {
	g, err := graphtest.FromEdges(3, [2]uint32{0, 2}, [2]uint32{2, 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DAG(g); err == nil {
		t.Error("an edge 2 -> 1 should be rejected")
	}
}
