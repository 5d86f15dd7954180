package memory

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// Spilled is a column of fixed-width integers moved out of memory into temporary files (one, or
// two for a large column: see spillPart), so that a phase of an analysis that does not read it
// runs without it resident. A heap of tens of millions of objects keeps a dozen such columns, of
// which each phase needs a few; holding all of them through every phase would put the peak
// above the size of the dump.
//
// The files are written with plain write calls, and nothing of a column is mapped while it is
// out: mapped pages that are touched count as resident memory of the process, which is what
// spilling avoids. A column comes back read into memory (Load, Restore) or as a read-only view
// of its files (Map) for as long as it is in use. Each file is unlinked as soon as it is
// created, so nothing is left behind however the process ends.
// When a file cannot be created or written (no temporary directory, a full disk), the column
// simply stays in memory: spilling saves memory, it is never needed for a right answer.
type Spilled[T ~uint8 | ~uint32 | ~uint64] struct {
	files  []*os.File // the column in parts of part elements (whole pages), the last part shorter
	part   int
	n      int
	kept   []T // the column itself when it could not be written out
	b      *Budget
	mapped []byte // the files' mapping, while Map's view is out (see Map)
	// paged is the column itself when it is a paged array (see Budget.Page): its pages are
	// its file's already, so spilling only sets them aside, with no copy, and every way back
	// gives it as it is.
	paged []T
}

// spillPart is the size from which a column is written as two files, one from each of two
// cores. Writing to the page cache is mostly the cost of the fresh pages it takes, which two
// cores bear at once, in less time than one after the other; two files because
// writes to one file are serialised by its lock.
const spillPart = 4 << 20

// Spill moves a to temporary files, giving a's memory back to the system as it goes: afterwards
// a reads as zeros and must not be used (the caller drops it; Restore gives the contents back).
// Only when a file cannot be written does a keep its contents, and the column stays in it.
func Spill[T ~uint8 | ~uint32 | ~uint64](b *Budget, a []T) *Spilled[T] {
	s := &Spilled[T]{n: len(a), b: b}
	if len(a) == 0 {
		return s
	}
	if p, ok := pagedOf(b, a); ok {
		setAside(p)
		s.paged = a
		return s
	}
	parts := 1
	if len(asBytes(a)) >= 2*spillPart && runtime.GOMAXPROCS(0) >= 2 {
		parts = 2
	}
	// Parts of whole pages, so that Map can lay the files side by side in one view.
	perPage := max(1, os.Getpagesize()/int(unsafe.Sizeof(a[0])))
	s.part = ((len(a)+parts-1)/parts + perPage - 1) / perPage * perPage
	files := make([]*os.File, parts)
	written := make([]int, parts) // bytes of each part written, and given back
	errs := make([]error, parts)
	s.each(func(i, lo, hi int) { files[i], written[i], errs[i] = b.spillFile(asBytes(a[lo:hi])) })
	if err := errors.Join(errs...); err != nil {
		// What went out, of the part that failed and of any other, comes back from its file.
		s.each(func(i, lo, hi int) {
			f := files[i]
			if f == nil {
				return
			}
			if _, rerr := f.ReadAt(asBytes(a[lo:hi])[:written[i]], 0); rerr != nil {
				panic(fmt.Sprintf("memory: a column could neither be written out (%v) nor read back (%v)", err, rerr))
			}
			f.Close()
		})
		s.kept = a
		if b != nil {
			b.kept.add(len(asBytes(a)), err)
		}
		return s
	}
	s.files = files
	return s
}

// spillChunk is how much of a column is written at a time before its pages are given back.
const spillChunk = 8 << 20

// spillFile writes b to a new temporary file, unlinked at once, and gives b's memory back to the
// system a chunk at a time as the chunk is written: the page cache then takes the pages just
// given back, where a whole column written first and freed after had it take pages the system
// had long had free. On a virtual machine that hands free pages back to its host, those cost a
// fault in the host each, and spilling a column early in an analysis ran far slower than one at
// its end. It returns how many bytes went out (and were given back) either way: when a
// write fails, the file is returned open with them, for the caller to read back.
func (bg *Budget) spillFile(b []byte) (f *os.File, written int, err error) {
	if f, err = os.CreateTemp(bg.Dir(), "heapledger-spill-*"); err != nil {
		return nil, 0, err
	}
	os.Remove(f.Name())
	for written < len(b) {
		end := min(written+spillChunk, len(b))
		if _, err := f.Write(b[written:end]); err != nil {
			return f, written, err
		}
		bg.release(b[written:end])
		written = end
	}
	return f, written, nil
}

// each calls fn for every part, with its elements lo..hi-1, the parts after the first on
// goroutines of their own.
func (s *Spilled[T]) each(fn func(i, lo, hi int)) {
	parts := (s.n + s.part - 1) / s.part
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i, i*s.part, min((i+1)*s.part, s.n))
		}()
	}
	fn(0, 0, min(s.part, s.n))
	wg.Wait()
}

// keptColumns tallies the columns that stayed in memory because their file could not be
// written: the results do not change, but the memory does, and the user is told
// (SpillFailures).
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

// SpillFailures reports how many columns, of how many bytes, stayed in memory because their
// file in b's directory could not be made or written, and why the first did.
func (b *Budget) SpillFailures() (n int, bytes int64, first error) {
	b.kept.Lock()
	defer b.kept.Unlock()
	return b.kept.n, b.kept.bytes, b.kept.first
}

// Len is the number of elements spilled.
func (s *Spilled[T]) Len() int { return s.n }

// Restore reads the column back into dst (allocated when shorter than the column), closes the
// file and returns the column. The Spilled must not be used afterwards.
func (s *Spilled[T]) Restore(dst []T) ([]T, error) {
	if s.paged != nil { // the column is back as it is, not given back with the Spilled
		a := s.paged
		*s = Spilled[T]{}
		return a, nil
	}
	a, err := s.Load(dst)
	s.Close()
	return a, err
}

// Load is Restore keeping the file, for a column that goes out again unchanged: dropping it
// then costs no second write.
func (s *Spilled[T]) Load(dst []T) ([]T, error) {
	if s.paged != nil {
		return s.paged, nil
	}
	if s.files == nil {
		if s.kept == nil {
			return dst[:0:0], nil
		}
		return s.kept, nil
	}
	if cap(dst) < s.n {
		dst = Make[T](s.b, s.n)
	}
	dst = dst[:s.n]
	errs := make([]error, len(s.files))
	s.each(func(i, lo, hi int) {
		if _, err := s.files[i].ReadAt(asBytes(dst[lo:hi]), 0); err != nil {
			errs[i] = fmt.Errorf("reading back elements %d to %d of a column of %d from a temporary file: %w", lo, hi-1, s.n, err)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return dst, nil
}

// Map is Load without a copy: the column comes back as a read-only view of its files, mapped
// into memory, whose pages are those the page cache already holds for them. Load takes fresh
// memory for the column, which the system must clear first (on a virtual machine that hands
// its free pages back to its host, at a fault in the host per page), and copies the column
// into it. The view counts as resident memory as Load's copy would, must not be written (a
// write faults), and must not be used after Unmap or Close, which end it. Where mapping is not
// available, or fails, and for a second view while one is out, Map is Load.
func (s *Spilled[T]) Map() ([]T, error) {
	if s.paged != nil {
		return s.paged, nil
	}
	// Under a budget that pages, the pages come in as they are read, and the pager may trim them.
	m := s.mapFiles(!s.b.Paging())
	if m == nil {
		return s.Load(nil)
	}
	s.b.track(m)
	s.mapped = m
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(m))), s.n), nil
}

// mapFiles maps the files into one view (see mapFiles), nil when they cannot be or one is out.
func (s *Spilled[T]) mapFiles(populate bool) []byte {
	if s.files == nil || s.mapped != nil {
		return nil
	}
	size := int(unsafe.Sizeof(*new(T)))
	return mapFiles(s.files, s.part*size, s.n*size, populate)
}

// View is Map for a caller that looks up a few elements and then ends, such as a command
// printing a report: the view's pages come in only as they are read (each from the page cache,
// without a copy), the files are let go, and the view is never ended. Restore would read the
// whole column into fresh memory first; on a virtual machine that hands its free pages back to
// its host, that costs a fault in the host per page.
// Where mapping is not available it is Restore. The Spilled must not be used afterwards.
func (s *Spilled[T]) View() ([]T, error) {
	if s.paged != nil {
		a := s.paged
		*s = Spilled[T]{}
		return a, nil
	}
	m := s.mapFiles(false)
	if m == nil {
		return s.Restore(nil)
	}
	s.b.track(m)
	for _, f := range s.files {
		f.Close() // the mapping holds the file
	}
	n := s.n
	*s = Spilled[T]{}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(m))), n), nil
}

// ScanRange reads elements [from, to) of the column back a part at a time into buf (some
// thousands of elements), calling fn with each part and the index of its first element: for a
// caller that reads the column once, in order, with no memory to spare for it. Two goroutines
// may scan two ranges at once.
func (s *Spilled[T]) ScanRange(buf []T, from, to int, fn func(lo int, part []T)) error {
	if from < 0 || to > s.n || from > to {
		return fmt.Errorf("elements %d to %d of a spilled column of %d", from, to-1, s.n)
	}
	if s.files == nil {
		kept := s.kept
		if s.paged != nil {
			kept = s.paged
		}
		if from < to {
			fn(from, kept[from:to])
		}
		return nil
	}
	if len(buf) == 0 {
		buf = make([]T, 4096)
	}
	for i := from; i < to; {
		// A part never spans two files.
		off := i % s.part
		part := buf[:min(len(buf), to-i, s.part-off)]
		if _, err := s.files[i/s.part].ReadAt(asBytes(part), int64(off)*int64(unsafe.Sizeof(part[0]))); err != nil {
			return fmt.Errorf("reading back elements %d to %d of a column of %d from a temporary file: %w", i, i+len(part)-1, s.n, err)
		}
		fn(i, part)
		i += len(part)
	}
	return nil
}

// Unmap ends the view Map gave, if it gave one (not a copy); the view must not be used
// afterwards.
func (s *Spilled[T]) Unmap() {
	if s.mapped != nil {
		s.b.untrack(s.mapped)
		unmap(s.mapped)
		s.mapped = nil
	}
}

// At reads element i without restoring the column: for the few lookups made while a column is
// out of memory.
func (s *Spilled[T]) At(i int) (T, error) {
	if i < 0 || i >= s.n {
		return 0, fmt.Errorf("element %d of a spilled column of %d", i, s.n)
	}
	if s.paged != nil {
		return s.paged[i], nil
	}
	if s.files == nil {
		return s.kept[i], nil
	}
	var v T
	b := unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))
	if _, err := s.files[i/s.part].ReadAt(b, int64(i%s.part)*int64(len(b))); err != nil && err != io.EOF {
		return 0, fmt.Errorf("element %d of a spilled column of %d: %w", i, s.n, err)
	}
	return v, nil
}

// Close discards the column, ending Map's view if it is out.
func (s *Spilled[T]) Close() {
	if s.paged != nil {
		Release(s.b, s.paged)
	}
	s.Unmap()
	for _, f := range s.files {
		f.Close()
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
