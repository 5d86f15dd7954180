package memory

import (
	"math/rand/v2"
	"testing"
)

// TestStackMatchesSlice drives a Stack and a plain slice with the same random pushes, pops and
// changes through Top, in runs long enough to cross chunk boundaries both ways many times.
func TestStackMatchesSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s Stack[uint64]
	var want []uint64
	check := func(step int) {
		t.Helper()
		if s.Len() != len(want) || s.Empty() != (len(want) == 0) {
			t.Fatalf("step %d: Len %d, Empty %v; want %d", step, s.Len(), s.Empty(), len(want))
		}
	}
	for step := 0; step < 400_000; step++ {
		// Phases that mostly push, then mostly pop, so that the depth wanders over several chunks.
		pushing := (step/(3*StackChunk))%2 == 0
		switch r := rng.IntN(10); {
		case len(want) == 0 || (pushing && r < 7) || (!pushing && r < 3):
			x := rng.Uint64()
			s.Push(x)
			want = append(want, x)
		case r == 9:
			*s.Top() += 1
			want[len(want)-1]++
		default:
			got := s.Pop()
			if w := want[len(want)-1]; got != w {
				t.Fatalf("step %d: Pop = %d, want %d", step, got, w)
			}
			want = want[:len(want)-1]
		}
		check(step)
		if step%100_000 == 99_999 {
			s.Reset()
			want = want[:0]
			check(step)
		}
	}
}

// TestStackReusesChunks checks that the depth crossing a chunk boundary back and forth allocates
// nothing after the first crossing.
func TestStackReusesChunks(t *testing.T) {
	var s Stack[uint32]
	for i := range StackChunk {
		s.Push(uint32(i))
	}
	allocs := testing.AllocsPerRun(100, func() {
		s.Push(1)
		s.Push(2)
		s.Pop()
		s.Pop()
		s.Pop()
		s.Push(3)
	})
	if allocs != 0 {
		t.Errorf("crossing a chunk boundary allocated %v times per round, want 0", allocs)
	}
}

func TestStackEmptyPopPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Pop on an empty Stack did not panic")
		}
	}()
	var s Stack[int]
	s.Push(1)
	s.Pop()
	s.Pop()
}
