package frames

import (
	"math/rand"
	"testing"

	"github.com/heapledger/heapledger/rewrite/code"
)

// TestMergeLocalsShortcut checks that mergeLocals, with its allocation-free shortcut (the join
// is a itself), gives exactly the join built slot by slot, and never aliases b.
func TestMergeLocalsShortcut(t *testing.T) {
	sites := []*code.Insn{{Op: code.NEW}, {Op: code.NEW}}
	pick := []Type{TopType, TopType, IntType, FloatType, LongType, DoubleType, NullType, UninitThis,
		ObjectType("a/A"), ObjectType("b/B"), ObjectType(""), {Kind: Uninitialized, Site: sites[0]}, {Kind: Uninitialized, Site: sites[1]}}
	rng := rand.New(rand.NewSource(1))
	gen := func() []Type {
		ts := make([]Type, rng.Intn(6))
		for i := range ts {
			ts[i] = pick[rng.Intn(len(pick))]
		}
		return ts
	}
	for _, strict := range []bool{true, false} {
		e := &engine{}
		e.m.strict = strict
		for k := 0; k < 200000; k++ {
			a, b := gen(), gen()
			if rng.Intn(3) == 0 {
				// a join's own output meeting something it absorbs: the common case
				a = e.joinLocals(a, b, nil)
				b = append([]Type(nil), a...)
				for i := range b {
					if b[i].Kind == Top && rng.Intn(2) == 0 {
						b[i] = pick[rng.Intn(len(pick))]
					}
				}
			}
			want := e.joinLocals(a, b, nil)
			got := e.mergeLocals(a, b)
			if !typesEqual(got, want) {
				t.Fatalf("strict=%v: mergeLocals(%v, %v) = %v, want %v", strict, a, b, got, want)
			}
			if len(got) > 0 && len(b) > 0 && &got[0] == &b[0] {
				t.Fatalf("mergeLocals(%v, %v) aliases b", a, b)
			}
		}
	}
}
