package memory

import "testing"

func TestScratchReusesZeroedAndTrims(t *testing.T) {
	var s Scratch
	a := s.Uint32s(1 << 17)
	a[5] = 7
	s.Release(a, make([]uint32, 10)) // the small one is left to the collector
	if len(s.free) != 1 {
		t.Fatalf("%d arrays held, want 1", len(s.free))
	}
	b := s.Uint32s(1 << 16)
	if &b[0] != &a[0] || len(b) != 1<<16 || b[5] != 0 {
		t.Fatalf("want the released array back, zeroed and cut to length: same=%v len=%d b[5]=%d", &b[0] == &a[0], len(b), b[5])
	}
	if c := s.Uint32s(1 << 18); len(c) != 1<<18 || len(s.free) != 0 {
		t.Fatalf("a request larger than any held array must allocate")
	}
	s.Release(make([]uint32, 1<<16), make([]uint32, 3<<16), make([]uint32, 2<<16))
	s.Trim(2)
	if len(s.free) != 2 || cap(s.free[0].a) != 3<<16 || cap(s.free[1].a) != 2<<16 {
		t.Fatalf("Trim(2) kept %d arrays, want the two largest", len(s.free))
	}
	// The smallest array that fits is taken, so big ones stay for big requests.
	if d := s.Uint32s(1 << 16); cap(d) != 2<<16 {
		t.Fatalf("took an array of %d for a request of %d", cap(d), 1<<16)
	}
	var none *Scratch
	if e := none.Uint32s(4); len(e) != 4 {
		t.Fatal("a nil Scratch must allocate")
	}
	none.Release(a)
	none.Trim(0)
}

// An array handed over by Give is known to be zero and is taken without clearing it again (which
// on a big array made ahead would cost a pass over its memory in the phase that takes it); one
// handed back by Release is cleared.
func TestScratchGiveSkipsTheClear(t *testing.T) {
	var s Scratch
	given, released := Make[uint32](nil, 1<<16), Make[uint32](nil, 1<<17)
	s.Give(given)
	s.Release(released)
	if len(s.free) != 2 {
		t.Fatalf("%d arrays held, want both", len(s.free))
	}
	// Written behind the Scratch's back, to see which array is cleared when taken.
	given[9], released[9] = 5, 6
	a := s.Uint32s(1 << 16) // the smallest that fits: the given one
	if &a[0] != &given[0] || a[9] != 5 {
		t.Fatalf("want the given array back as it is: same=%v a[9]=%d", &a[0] == &given[0], a[9])
	}
	b := s.Uint32s(1 << 16)
	if &b[0] != &released[0] || b[9] != 0 {
		t.Fatalf("want the released array back, cleared: same=%v b[9]=%d", &b[0] == &released[0], b[9])
	}
	if len(s.free) != 0 {
		t.Fatalf("%d arrays still held after both were taken", len(s.free))
	}
	var none *Scratch
	none.Give(given) // a nil Scratch takes nothing, and does not fail
}

func TestScratchUint64s(t *testing.T) {
	var s Scratch
	a := s.Uint64s(1 << 15)
	a[3] = 9
	s.Release64(a, make([]uint64, 8))
	if b := s.Uint64s(100); &b[0] != &a[0] || b[3] != 0 || len(b) != 100 {
		t.Fatal("want the released array back, zeroed and cut to length")
	}
	if len(s.free64) != 0 {
		t.Fatalf("%d arrays still held", len(s.free64))
	}
}

// Make is make with advice: the slice must be make's, whether or not the kernel takes it.
func TestMakeIsMake(t *testing.T) {
	for _, n := range []int{0, 1, 1000, hugeMin/4 + 12345} {
		a := Make[uint32](nil, n)
		if len(a) != n || cap(a) != n {
			t.Fatalf("Make(%d) gave len %d cap %d", n, len(a), cap(a))
		}
		for i := range a {
			if a[i] != 0 {
				t.Fatalf("Make(%d)[%d] = %d, want zero", n, i, a[i])
			}
			a[i] = uint32(i)
		}
	}
}
