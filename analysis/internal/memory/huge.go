package memory

import (
	"os"
	"unsafe"
)

// hugeMin is the size from which Make asks for huge pages and faults pages in ahead: below it
// the saving is small, and a dump of a few dozen megabytes, where fixed costs leave the least
// room, keeps 4 KB granularity.
const hugeMin = 32 << 20

// HugeArray reports whether an array of so many bytes is one that Make asks huge pages for and
// faults in ahead.
func HugeArray(bytes int64) bool { return bytes >= hugeMin }

// Make returns a zeroed slice of n elements, like make. A large one (hugeMin bytes and more) is
// asked to be backed by transparent huge pages where the system leaves that to the program (the
// "madvise" setting), and b's faulter faults its pages in from its start on while the caller
// begins to use it (see prefault). A heap analysis touches gigabytes of fresh arrays phase after
// phase: with 4 KB pages faulting them in was a large share of the run on a virtual machine, and
// even with huge pages the kernel clearing them cost time on a core that most phases, serial,
// leave idle. Both are only requests: where the kernel has nothing to give, or refuses, nothing
// changes. With a nil b nothing is faulted in ahead.
func Make[T ~uint8 | ~uint32 | ~uint64](b *Budget, n int) []T {
	if a := paged[T](b, n); a != nil {
		return a // a file's pages: nothing to advise or fault in ahead
	}
	var z T
	b.donate(int64(n) * int64(unsafe.Sizeof(z))) // see GiveCache
	a := make([]T, n)
	adviseHuge(b, a, true)
	writePages(a)
	return a
}

// writePages writes a zero into every page of a smaller array (below hugeMin), faulting in the
// fresh ones. Many phases read an element before they write it (a visit mark, a running sum): a
// fresh page first read is mapped to the system's shared zero page, and the write that follows
// faults a second time and flushes that mapping from every core the process runs on, an
// interrupt to the other core that a virtual machine makes costly. (A large array's pages are
// faulted in ahead by the faulter; reads that overtake it take the zero page too, but a huge
// page at a time.)
func writePages[T ~uint8 | ~uint32 | ~uint64](a []T) {
	var z T
	size := uintptr(len(a)) * unsafe.Sizeof(z)
	if size >= hugeMin || size < 2*pageSize {
		return
	}
	step := pageSize / int(unsafe.Sizeof(z))
	for i := 0; i < len(a); i += step {
		a[i] = 0
	}
}

// pageSize is the smallest page size of the systems Go runs on.
const pageSize = 4096

// Reserve is Make for room that will be filled only in part, such as capacity set aside for
// appends: its pages are not faulted in ahead, so what is never written never becomes resident.
func Reserve[T ~uint8 | ~uint32 | ~uint64](b *Budget, n int) []T {
	if a := paged[T](b, n); a != nil {
		return a
	}
	a := make([]T, n)
	adviseHuge(b, a, false)
	return a
}

// FaultAhead has the pages of elements [from, to) of an array from Reserve (to at most its
// capacity) faulted in by b's faulter, for a caller that appends to it and knows how far it will
// soon get. Unlike Make it does so for an array of any size: the caller knows whether another
// core is free for it.
func FaultAhead[T ~uint8 | ~uint32 | ~uint64](b *Budget, a []T, from, to int) {
	faultAhead(b, a, from, min(to, cap(a)))
}

// FaultsDone waits until the pages b's faulter was asked for so far (FaultAhead, Make) are in,
// or given up on: afterwards no page of theirs comes in behind the caller's back, and pages it
// gives back (Release) stay out.
func FaultsDone(b *Budget) { b.faulter().done() }

// CachedEnd reports whether the page cache holds the end of a file of size bytes (its last 4 MB,
// or quarter if that is less; see Cached): a file read in order, whose end a run reaches last,
// is then in memory rather than to be read from disk.
func CachedEnd(f *os.File, size int64) bool {
	n := min(4<<20, size/4)
	return Cached(f, size-n, n)
}

// Release gives the pages of arrays the caller is done with back to the system at once, where a
// collection would take them only once nothing refers to them, and at a collection's cost: for
// a structure dropped as a whole at the end of its use. The arrays read as zeros afterwards and
// must not be used; the garbage collector takes them as it would have.
func Release[T ~uint8 | ~uint32 | ~uint64](b *Budget, arrays ...[]T) {
	for _, a := range arrays {
		b.release(asBytes(a[:cap(a)]))
	}
}

// AppendReleasing appends src to dst, giving src's memory back to the system a chunk at a time
// as it is copied: the copy then takes the pages just given back instead of adding its size to
// the peak. src reads as zeros afterwards and must not be used.
func AppendReleasing[T ~uint8 | ~uint32 | ~uint64](b *Budget, dst, src []T) []T {
	const chunk = 1 << 20 // bytes
	var z T
	step := max(1, chunk/int(unsafe.Sizeof(z)))
	for lo := 0; lo < len(src); lo += step {
		part := src[lo:min(lo+step, len(src))]
		dst = append(dst, part...)
		b.release(asBytes(part))
	}
	return dst
}
