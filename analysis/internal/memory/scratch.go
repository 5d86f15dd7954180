package memory

import (
	"cmp"
	"slices"
)

// Scratch passes big work arrays from one phase of an analysis to the next. Every phase needs a
// few arrays of one word per node; taking them from the arrays an earlier phase has finished
// with, instead of from the garbage collector, means the memory is not handed back to the
// system and faulted in again page by page — which on a heap of tens of millions of objects
// costs more than the phase's own work. A nil *Scratch allocates and forgets, as make does.
// A Scratch is not safe for concurrent use.
type Scratch struct {
	free   []held[uint32]
	free64 []held[uint64]
	// Spill lets the phases move arrays they will need again, but not for a while, to temporary
	// files (see Spilled) instead of keeping them resident. Such a phase can then fail with an
	// error, if a file cannot be read back.
	Spill bool
	// Budget is where the arrays come from (nil: make).
	Budget *Budget
}

// held is an array a Scratch holds for reuse.
type held[T uint32 | uint64] struct {
	a []T
	// zero: the array has not been written since it was made, and needs no clearing.
	zero bool
}

// Spills reports whether the phases may spill arrays to temporary files.
func (s *Scratch) Spills() bool { return s != nil && s.Spill }

// Memory is the budget the arrays come from (nil for a nil Scratch).
func (s *Scratch) Memory() *Budget {
	if s == nil {
		return nil
	}
	return s.Budget
}

// Uint32s returns a zeroed slice of n elements, reusing a released array when one is large
// enough (the smallest such, so that big arrays stay for big requests).
func (s *Scratch) Uint32s(n int) []uint32 {
	if s == nil {
		return Make[uint32](nil, n)
	}
	return take(s.Budget, &s.free, n)
}

// Uint64s is Uint32s for 64-bit words (sizes).
func (s *Scratch) Uint64s(n int) []uint64 {
	if s == nil {
		return Make[uint64](nil, n)
	}
	return take(s.Budget, &s.free64, n)
}

// Release hands arrays back for reuse; the caller must not use them afterwards. Arrays under
// 256 KB are left to the garbage collector.
func (s *Scratch) Release(bufs ...[]uint32) {
	if s != nil {
		keep(&s.free, bufs, 64<<10, false)
	}
}

// Release64 is Release for arrays of 64-bit words.
func (s *Scratch) Release64(bufs ...[]uint64) {
	if s != nil {
		keep(&s.free64, bufs, 32<<10, false)
	}
}

// Give hands over arrays fresh from Make or Reserve, never written, for the phases to take:
// made ahead of their phase, while other work runs, their pages are faulted in by then, and
// being zero they are not cleared again when taken.
func (s *Scratch) Give(bufs ...[]uint32) {
	if s != nil {
		keep(&s.free, bufs, 0, true)
	}
}

// MoveTo hands every array s holds over to t, as they are.
func (s *Scratch) MoveTo(t *Scratch) {
	if s == nil || t == nil {
		return
	}
	t.free, t.free64 = append(t.free, s.free...), append(t.free64, s.free64...)
	s.free, s.free64 = nil, nil
}

func take[T uint32 | uint64](b *Budget, free *[]held[T], n int) []T {
	best := -1
	for i, h := range *free {
		if cap(h.a) >= n && (best < 0 || cap(h.a) < cap((*free)[best].a)) {
			best = i
		}
	}
	if best < 0 {
		return Make[T](b, n)
	}
	h := (*free)[best]
	*free = slices.Delete(*free, best, best+1)
	a := h.a[:n]
	if !h.zero {
		clear(a)
	}
	return a
}

func keep[T uint32 | uint64](free *[]held[T], bufs [][]T, minLen int, zero bool) {
	for _, b := range bufs {
		if cap(b) >= minLen {
			*free = append(*free, held[T]{b, zero})
		}
	}
}

// Trim keeps the k largest arrays and gives the memory of the rest back to the system at once
// (see Release), so that arrays the next phase will not use do not stay resident while it runs,
// nor wait for a collection to go.
func (s *Scratch) Trim(k int) {
	if s == nil || len(s.free) <= k {
		return
	}
	slices.SortFunc(s.free, func(a, b held[uint32]) int { return cmp.Compare(cap(b.a), cap(a.a)) })
	for _, h := range s.free[k:] {
		Release(s.Budget, h.a)
	}
	clear(s.free[k:])
	s.free = s.free[:k]
}

// Free gives the memory of every array it holds back to the system at once (see Release) and
// forgets them.
func (s *Scratch) Free() {
	if s == nil {
		return
	}
	for _, h := range s.free {
		Release(s.Budget, h.a)
	}
	for _, h := range s.free64 {
		Release(s.Budget, h.a)
	}
	s.Drop()
}

// Drop forgets every array it holds, for the garbage collector to take.
func (s *Scratch) Drop() {
	if s != nil {
		s.free, s.free64 = nil, nil
	}
}
