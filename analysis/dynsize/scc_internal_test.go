package dynsize

import (
	"reflect"
	"testing"

	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// The components that the search marks as entered from outside must give exactly the DAG that
// Condense's own pass over every edge gives, with and without skipped edges.
func TestEnteredMarksMatchFullPass(t *testing.T) {
	for seed := int64(1); seed <= 300; seed++ {
		n := 2 + int(seed%40)
		g := heapgraph.Random(seed, n, int(seed%5+1)*n, 16)
		var skip heapgraph.EdgeSet
		if seed%2 == 0 {
			skip = heapgraph.NewEdgeSet(len(g.Succ))
			for e := uint32(0); e < uint32(len(g.Succ)); e += 3 {
				skip.Add(e)
			}
		}
		comp, count, entered := components(g, skip, nil)
		want, wantRoot := condense(g, skip, comp, count, nil, nil)
		got, gotRoot := condense(g, skip, comp, count, entered, nil)
		if !reflect.DeepEqual(want, got) || wantRoot != gotRoot {
			t.Fatalf("seed %d: the marks give another DAG than the full pass", seed)
		}
	}
}
