package hprof

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// heapOf lays out objects contiguously as layout m would and feeds them to votes in address
// order: arrays of every element size and of references, with instances (of an arbitrary size:
// their layout is not known here) between some of them.
func heapOf(m Model, objArrays bool, rng *rand.Rand) *LayoutVotes {
	v := &LayoutVotes{}
	v.Break()
	id := uint64(0x7f0000000)
	for range 3000 {
		switch k := rng.IntN(10); {
		case k < 3:
			v.Object(id)
			id += 8 * uint64(2+rng.IntN(6))
		case k < 5 && objArrays:
			n := uint32(rng.IntN(40))
			v.Array(id, n, 0)
			id += m.ObjArraySize(n)
		default:
			es := []int{1, 2, 4, 8}[rng.IntN(4)]
			n := uint32(rng.IntN(100))
			v.Array(id, n, es)
			id += m.ArraySize(es, n)
		}
		if rng.IntN(100) == 0 {
			id += 1 << 20 // the next region
			v.Break()
		}
	}
	return v
}

// Every candidate layout is recognized from a heap laid out by it; with object arrays absent, the
// two layouts that differ only in reference size are told apart by the id range.
func TestLayoutCandidates(t *testing.T) {
	if len(layoutCandidates) != numLayouts {
		t.Fatalf("%d layouts, numLayouts says %d", len(layoutCandidates), numLayouts)
	}
	for i, a := range layoutCandidates {
		for _, b := range layoutCandidates[:i] {
			if a == b {
				t.Errorf("layout %+v listed twice", a)
			}
		}
	}
}

func TestInferModelFromGaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range Layouts() {
		got, how := InferModel(8, 0x7f0000000, 0x7f0000000+1<<30, heapOf(m, true, rng))
		if got != m || !strings.Contains(how, "address gaps") {
			t.Errorf("layout %+v: inferred %+v (%s)", m, got, how)
		}
		// Without object arrays: the id range (1 GB: compressed references) settles the size of
		// references between layouts with the same headers.
		got, how = InferModel(8, 0x7f0000000, 0x7f0000000+1<<30, heapOf(m, false, rng))
		if got.Header != m.Header || got.ArrayHeader != m.ArrayHeader || got.Align != m.Align || !got.Compressed {
			t.Errorf("layout %+v without object arrays: inferred %+v (%s)", m, got, how)
		}
	}
	// Too few arrays, or none: the id range alone.
	few := &LayoutVotes{}
	few.Break()
	few.Array(0x1000, 3, 1)
	few.Object(0x1000 + 24)
	for _, v := range []*LayoutVotes{nil, {}, few} {
		if got, how := InferModel(8, 0x1000, 0x2000, v); got != ModelFor(8, true) || !strings.Contains(how, "id range") {
			t.Errorf("no evidence: %+v (%s)", got, how)
		}
		if got, _ := InferModel(8, 0x1000, 0x1000+1<<36, v); got != ModelFor(8, false) {
			t.Errorf("no evidence, 64 GB of ids: %+v", got)
		}
	}
	if got, _ := InferModel(4, 0, 1<<20, heapOf(Layouts()[1], true, rng)); got != ModelFor(4, false) {
		t.Errorf("4-byte ids: %+v", got)
	}
	// Objects that do not follow one another (dead objects left out between them) vote for no
	// layout.
	v := &LayoutVotes{}
	id := uint64(0x10000)
	for i := range 1000 {
		if i%100 == 0 {
			v.Break()
		}
		v.Array(id, 5, 4)
		id += 1 << 12
	}
	if got, how := InferModel(8, 0x10000, id, v); got != ModelFor(8, true) || !strings.Contains(how, "id range") {
		t.Errorf("scattered arrays: %+v (%s)", got, how)
	}
}
