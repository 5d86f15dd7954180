//go:build linux

package memory

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
	"weak"
)

const hugePage = 2 << 20

func adviseHuge[T ~uint8 | ~uint32 | ~uint64](b *Budget, a []T, fill bool) {
	if cap(a) == 0 {
		return
	}
	var z T
	size := uintptr(cap(a)) * unsafe.Sizeof(z)
	if size < hugeMin {
		return
	}
	// Only the whole huge pages inside the array: advice on a neighbour's bytes is not ours to give.
	all := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(a))), size)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(all)))
	from := ((start + hugePage - 1) &^ (hugePage - 1)) - start
	to := ((start + size) &^ (hugePage - 1)) - start
	if to > from {
		_ = syscall.Madvise(all[from:to], 14) // MADV_HUGEPAGE
	}
	if fill {
		b.faulter().prefault(unsafe.SliceData(all), 0, size)
	}
}

func faultAhead[T ~uint8 | ~uint32 | ~uint64](b *Budget, a []T, from, to int) {
	var z T
	if from >= to || b.Paging() { // a file's pages: faulting them in would write the file
		return
	}
	a = a[:cap(a)]
	b.donate(int64(to-from) * int64(unsafe.Sizeof(z)))
	b.faulter().prefault((*byte)(unsafe.Pointer(unsafe.SliceData(a))), uintptr(from)*unsafe.Sizeof(z), uintptr(to)*unsafe.Sizeof(z))
}

// madvPopulateWrite faults pages in writable, as writing them would, without changing what they
// hold (Linux 5.14 on).
const madvPopulateWrite = 23

// faulter is one goroutine of a Budget that faults in the pages of the arrays Make hands it, in
// order, while their callers start to use them. It holds them weakly: an array dropped before
// its turn, or half-way, is left alone rather than kept alive and made resident. It starts on
// first use and ends with the Budget (stop).
type faulter struct {
	mu      sync.Mutex
	queue   chan faultJob // nil until started, and again once stopped
	stopped bool
	exited  chan struct{}
	off     atomic.Bool // the kernel refused: no madvise to populate with
}

type faultJob struct {
	p        weak.Pointer[byte]
	from, to uintptr       // bytes from p
	done     chan struct{} // when not nil, a marker: closed once the jobs before it are done
}

// faulter returns b's faulter, nil for a nil b.
func (b *Budget) faulter() *faulter {
	if b == nil {
		return nil
	}
	return &b.faults
}

// start returns the queue, starting the goroutine if it is not running; nil once stopped.
func (f *faulter) start() chan faultJob {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.queue == nil && !f.stopped {
		f.queue, f.exited = make(chan faultJob, 256), make(chan struct{})
		go f.faultIn(f.queue, f.exited)
	}
	return f.queue
}

// stop ends the goroutine once the jobs queued are done.
func (f *faulter) stop() {
	f.mu.Lock()
	q, exited := f.queue, f.exited
	f.queue, f.stopped = nil, true
	f.mu.Unlock()
	if q != nil {
		close(q)
		<-exited
	}
}

// prefault queues the bytes [from, to) of the array at p for the faulter. A nil faulter (of a
// nil Budget) does nothing.
func (f *faulter) prefault(p *byte, from, to uintptr) {
	// With one core the faulter would only take turns with the caller.
	if f == nil || f.off.Load() || runtime.GOMAXPROCS(0) < 2 {
		return
	}
	q := f.start()
	if q == nil {
		return
	}
	select {
	case q <- faultJob{p: weak.Make(p), from: from, to: to}:
	default: // the caller faults the pages in itself, as it would without the faulter
	}
}

// done queues a marker behind the jobs queued so far and waits for the faulter to reach it.
func (f *faulter) done() {
	if f == nil || runtime.GOMAXPROCS(0) < 2 {
		return // no faulter: prefault queues nothing
	}
	q := f.start()
	if q == nil {
		return
	}
	done := make(chan struct{})
	q <- faultJob{done: done}
	<-done
}

func (f *faulter) faultIn(queue <-chan faultJob, exited chan<- struct{}) {
	defer close(exited)
	for job := range queue {
		if job.done != nil {
			close(job.done)
			continue
		}
		// A huge page at a time, so that the caller, writing from the start too, soon finds its
		// pages ready, and a dropped array is noticed.
		for off := job.from; off < job.to; off += hugePage {
			p := job.p.Value()
			if p == nil {
				break
			}
			err := f.populate(unsafe.Add(unsafe.Pointer(p), off), min(hugePage, job.to-off))
			runtime.KeepAlive(p)
			if err != nil {
				break
			}
		}
	}
}

// Populate faults in the pages of a, a huge page at a time, adding the bytes done to done as it
// goes. It changes nothing a holds, so the array may be in use meanwhile. It reports false,
// stopping there, where the system cannot (no MADV_POPULATE_WRITE before Linux 5.14; other
// systems).
func Populate[T ~uint8 | ~uint32 | ~uint64](b *Budget, a []T, done *atomic.Int64) bool {
	var z T
	size := uintptr(cap(a)) * unsafe.Sizeof(z)
	f := b.faulter()
	if f == nil {
		f = &faulter{}
	}
	if size == 0 || f.off.Load() || b.Paging() {
		return size == 0
	}
	p := unsafe.Pointer(unsafe.SliceData(a[:cap(a)]))
	for off := uintptr(0); off < size; off += hugePage {
		n := min(hugePage, size-off)
		b.donate(int64(n))
		if f.populate(unsafe.Add(p, off), n) != nil {
			return false
		}
		done.Add(int64(n))
	}
	runtime.KeepAlive(a)
	return true
}

// populate faults in the pages of n bytes from p. The range is widened to whole pages: faulting
// in a neighbour's share of a page changes nothing it holds. A kernel without the advice turns
// the faulter, and Populate, off.
func (f *faulter) populate(p unsafe.Pointer, n uintptr) error {
	const page = 4096
	start := uintptr(p) &^ (page - 1)
	n += uintptr(p) - start
	for try := 0; ; try++ {
		_, _, e := syscall.Syscall(syscall.SYS_MADVISE, start, n, madvPopulateWrite)
		if (e == syscall.EINTR || e == syscall.EAGAIN) && try < 100 { // a signal, a page briefly locked
			continue
		}
		if e == syscall.EINVAL { // no such advice before Linux 5.14: no one asks again
			f.off.Store(true)
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

// Resident returns the bytes of the process's memory now resident (the RSS that a peak is
// measured in), or -1 if it cannot tell.
func Resident() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	// size resident shared text lib data dt, in pages
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return -1
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return -1
	}
	return pages * int64(os.Getpagesize())
}

// release gives the whole pages inside p back to the system (MADV_DONTNEED): they read as zero
// afterwards, and count as resident again only when touched.
func (b *Budget) release(p []byte) {
	const page = 4096
	if len(p) == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	lo, hi := (start+page-1)&^(page-1), (start+uintptr(len(p)))&^(page-1)
	if hi <= lo {
		return
	}
	if b != nil {
		if a, ok := b.paged.containing(start, uintptr(len(p))); ok && a.owned {
			freePages(a, lo-a.addr, hi-lo)
			return
		}
	}
	_ = syscall.Madvise(p[lo-start:hi-start], syscall.MADV_DONTNEED)
}

// dropCache drops the page cache's clean pages of bytes [off, off+n) of f
// (POSIX_FADV_DONTNEED). It is only advice: a file system that keeps its pages in memory
// (tmpfs) keeps them.
func dropCache(f *os.File, off, n int64) {
	const dontNeed = 4
	_, _, _ = syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), uintptr(off), uintptr(n), dontNeed, 0, 0)
}

// mapFiles maps files side by side, read-only, into one view of total bytes: file i at i*part
// bytes (a multiple of the page size), its page tables made at once when populate is set. It
// returns nil when the system refuses; the caller then reads the files instead.
func mapFiles(files []*os.File, part, total int, populate bool) []byte {
	if total == 0 {
		return nil
	}
	// The view's address range is reserved first, then each file mapped over its place in it.
	region, err := syscall.Mmap(-1, 0, total, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(region)))
	for i, f := range files {
		off := i * part
		n := min(part, total-off)
		// MAP_POPULATE makes the page tables at once, from pages the page cache holds, for phases
		// that read a column all over.
		flags := syscall.MAP_SHARED | syscall.MAP_FIXED
		if populate {
			flags |= syscall.MAP_POPULATE
		}
		_, _, errno := syscall.Syscall6(syscall.SYS_MMAP, base+uintptr(off), uintptr(n), syscall.PROT_READ,
			uintptr(flags), f.Fd(), 0)
		if errno != 0 {
			_ = syscall.Munmap(region)
			return nil
		}
	}
	if !populate {
		// A view read here and there: a page read maps that page alone, not the 16 around it
		// that the system maps by default, each of which counts as resident memory.
		_ = syscall.Madvise(region, syscall.MADV_RANDOM)
	}
	return region
}

func unmap(b []byte) { _ = syscall.Munmap(b) }

// Cached reports whether the system's page cache holds at least half of the pages of bytes
// [off, off+n) of f. It maps the range and asks mincore, which reads no data. Where it cannot
// tell (an empty range, a file that cannot be mapped) it reports true: callers then do what
// suits a file read from memory, as they did before they could ask.
func Cached(f *os.File, off, n int64) bool {
	page := int64(os.Getpagesize())
	start := off &^ (page - 1)
	n += off - start
	if n <= 0 || start < 0 {
		return true
	}
	b, err := syscall.Mmap(int(f.Fd()), start, int(n), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return true
	}
	defer syscall.Munmap(b)
	in, pages, err := residentPages(unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)))
	return err != nil || 2*in >= pages
}

// residentPages counts the pages of the n bytes from p (widened to whole pages) that are in
// memory: for a file's mapping, those the page cache holds.
func residentPages(p unsafe.Pointer, n uintptr) (in, pages int, err error) {
	page := uintptr(os.Getpagesize())
	start := uintptr(p) &^ (page - 1)
	n += uintptr(p) - start
	vec := make([]byte, (n+page-1)/page)
	if len(vec) == 0 {
		return 0, 0, nil
	}
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, start, n, uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		return 0, len(vec), e
	}
	for _, v := range vec {
		in += int(v & 1)
	}
	return in, len(vec), nil
}
