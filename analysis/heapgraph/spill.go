package heapgraph

import (
	"fmt"
	"io"
	"os"
	"sync"
	"unsafe"
)

// Spilled is a column of fixed-width integers moved out of memory into a temporary file, so that
// a phase of an analysis that does not read it runs without it resident. A heap of tens of
// millions of objects keeps a dozen such columns, of which each phase needs a few; holding all
// of them through every phase would put the peak above the size of the dump.
//
// The file is read and written with plain read and write calls, never mapped: mapped pages that
// are touched count as resident memory of the process, which is what spilling avoids. The file
// is unlinked as soon as it is created, so nothing is left behind however the process ends.
// When the file cannot be created or written (no temporary directory, a full disk), the column
// simply stays in memory: spilling saves memory, it is never needed for a right answer.
type Spilled[T ~uint8 | ~uint32 | ~uint64] struct {
	f    *os.File
	n    int
	kept []T // the column itself when it could not be written out
}

// Spill moves a to a temporary file. The caller must drop its own references to a for the memory
// to be freed; Restore gives the contents back.
func Spill[T ~uint8 | ~uint32 | ~uint64](a []T) *Spilled[T] {
	s := &Spilled[T]{n: len(a)}
	if len(a) == 0 {
		return s
	}
	f, err := os.CreateTemp("", "heapledger-spill-*")
	if err != nil {
		s.kept = a
		kept.add(len(asBytes(a)), err)
		return s
	}
	os.Remove(f.Name())
	if _, err := f.Write(asBytes(a)); err != nil {
		f.Close()
		s.kept = a
		kept.add(len(asBytes(a)), err)
		return s
	}
	s.f = f
	return s
}

// kept tallies the columns that stayed in memory because their file could not be written: the
// results do not change, but the memory does, and the user is told (SpillFailures).
var kept keptColumns

type keptColumns struct {
	sync.Mutex
	n     int
	bytes int64
	first error
}

func (k *keptColumns) add(bytes int, err error) {
	k.Lock()
	defer k.Unlock()
	if k.n == 0 {
		k.first = err
	}
	k.n++
	k.bytes += int64(bytes)
}

// SpillFailures reports how many columns, of how many bytes, stayed in memory since the program
// started because their temporary file could not be made or written, and why the first did.
func SpillFailures() (n int, bytes int64, first error) {
	kept.Lock()
	defer kept.Unlock()
	return kept.n, kept.bytes, kept.first
}

// Len is the number of elements spilled.
func (s *Spilled[T]) Len() int { return s.n }

// Restore reads the column back into dst (allocated when shorter than the column), closes the
// file and returns the column. The Spilled must not be used afterwards.
func (s *Spilled[T]) Restore(dst []T) ([]T, error) {
	a, err := s.Load(dst)
	s.Close()
	return a, err
}

// Load is Restore keeping the file, for a column that goes out again unchanged: dropping it
// then costs no second write.
func (s *Spilled[T]) Load(dst []T) ([]T, error) {
	if s.f == nil {
		if s.kept == nil {
			return dst[:0:0], nil
		}
		return s.kept, nil
	}
	if cap(dst) < s.n {
		dst = Make[T](s.n)
	}
	dst = dst[:s.n]
	if _, err := s.f.ReadAt(asBytes(dst), 0); err != nil {
		return nil, fmt.Errorf("reading back a column of %d elements from a temporary file: %w", len(dst), err)
	}
	return dst, nil
}

// At reads element i without restoring the column: for the few lookups made while a column is
// out of memory.
func (s *Spilled[T]) At(i int) (T, error) {
	if i < 0 || i >= s.n {
		return 0, fmt.Errorf("element %d of a spilled column of %d", i, s.n)
	}
	if s.f == nil {
		return s.kept[i], nil
	}
	var v T
	b := unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))
	if _, err := s.f.ReadAt(b, int64(i)*int64(len(b))); err != nil && err != io.EOF {
		return 0, fmt.Errorf("element %d of a spilled column of %d: %w", i, s.n, err)
	}
	return v, nil
}

// Close discards the column.
func (s *Spilled[T]) Close() {
	if s.f != nil {
		s.f.Close()
	}
	*s = Spilled[T]{}
}

// asBytes views a column as its bytes, in the machine's own order: the file is read back only by
// the process that wrote it, so no conversion is needed, and none is made.
func asBytes[T ~uint8 | ~uint32 | ~uint64](a []T) []byte {
	if len(a) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), len(a)*int(unsafe.Sizeof(z)))
}
