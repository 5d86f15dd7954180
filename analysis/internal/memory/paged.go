package memory

import (
	"cmp"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// Paged arrays: when a budget is below what an analysis would take with every array in memory
// of its own (see Budget.Page), the big arrays Make and Reserve give are views of files in the
// budget's directory instead, mapped shared and writable. The Go heap of a process is anonymous
// memory, which only swap could move out (and the machines heap dumps are analysed on seldom
// have swap); a file's pages, once written back, are the page cache's, which the kernel drops
// under pressure and reads back on the next touch. So under a cgroup memory limit the arrays of
// a phase take what room there is, and what does not fit waits on disk.
//
// Without a cgroup nothing presses the kernel to drop them, and the pages a process has mapped
// count as its resident memory: the budget's pager keeps that near the budget itself, the way
// Eclipse MAT's index manager unloads an index a phase is done with. Whenever the resident
// memory passes three quarters of the budget it ends the process's mapping of the arrays' pages,
// the oldest arrays first (a phase reads mostly what it made last), down to half of it, and has
// their write-back started, so that the page cache may drop them without waiting on the disk;
// pages read again come back from the page cache, or from disk. It reads the resident memory at
// intervals, so a phase that faults pages in fast can pass the budget in between.
//
// Every file is unlinked as soon as it is made: nothing is left behind however the process
// ends, interrupted or killed. An array given back (Release) has its file's blocks freed with it;
// a column set aside (Store.Out, Spill) is not copied to a file of its own, as one in memory
// is: its pages are its file's already, and only go out (setAside).
//
// Steps, each a function below:
//  1. Budget.Page turns paging on for a budget and starts the pager (pager.run);
//  2. Make and Reserve ask paged for an array of pagedMin bytes or more, which makes the file
//     and maps it in the budget's Pages (mapArray, mapFile, adviseLarge), or answers nil when that fails, and the array is made as
//     usual; views of spilled columns are trimmed too while they are mapped (track);
//  3. the pager reads the resident memory every pagerTick and, past three quarters of the
//     budget, trims the arrays (pager.trim: unmapPages) and hands them to writeBacks;
//  4. release frees an array's pages and blocks (freePages) when it is given back, and
//     setAside takes out a column's pages;
//  5. Close lets every array's file go, its pages replaced by untouched anonymous ones
//     (pager.close, closeArray).

// pagedMin is the smallest array that is paged: below it the file and the mapping cost more
// than the memory they save.
const pagedMin = 1 << 20

// pagerTick is how often the pager reads the resident memory.
const pagerTick = 5 * time.Millisecond

// Pages says what pages a budget's paged arrays are mapped in (Budget.Page).
type Pages uint8

const (
	// BasePages maps paged arrays in the system's base pages (4 KB): a fault maps little, so
	// the pager, reading the resident memory at intervals, holds a budget the kernel does not
	// hold for it (no cgroup, or a budget below the cgroup's limit) to within a few faults.
	BasePages Pages = iota
	// LargePages asks the system for transparent huge pages (2 MB) on the arrays' files, where
	// its file system can hold them: under a cgroup's limit, which the kernel holds itself, a
	// phase reading an array larger than the memory left faults a page in per 2 MB read
	// instead of per 4 KB, and reads it ahead as much. The kernel's cost per fault, not the
	// disk, is what a budget's phases wait on. Faults bring in memory faster than the pager
	// looks, so a budget that only the pager holds keeps BasePages.
	LargePages
)

// pagedArray is one array's file and its mapping.
type pagedArray struct {
	fd    int    // -1 for a view of a spilled column, whose file is the Spilled's
	mem   []byte // the mapping
	addr  uintptr
	size  uintptr
	owned bool // its file is the pager's, let go at the end; a view's is its Spilled's
}

// pager keeps a budget's paged arrays and the process's resident memory under the budget.
type pager struct {
	mu     sync.Mutex
	on     bool
	from   uintptr      // the smallest array paged (0: pagedMin)
	arrays []pagedArray // by address
	order  []uintptr    // addresses, oldest first: the order trims go in
	next   int          // where in order the next trim starts
	stop   chan struct{}
	exited chan struct{}
	trims  int   // how many times the pager found the budget passed
	pages  Pages // what pages arrays are mapped in
}

// Page has b's big arrays made from files from now on (see the top of this file), mapped in
// pages, and a pager keep the resident memory under b's limit. It does nothing for a budget
// without a limit, or where the system cannot map files.
func (b *Budget) Page(pages Pages) {
	if b == nil || b.limit <= 0 || !canPage {
		return
	}
	p := &b.paged
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on {
		return
	}
	p.on, p.stop, p.exited, p.pages = true, make(chan struct{}), make(chan struct{}), pages
	go p.run(b.limit, p.stop, p.exited)
}

// PageFrom has arrays of bytes bytes and more paged, rather than pagedMin and more: for tests,
// which page every array of a small dump so.
func (b *Budget) PageFrom(bytes int) {
	b.paged.mu.Lock()
	defer b.paged.mu.Unlock()
	b.paged.from = uintptr(max(bytes, 1))
}

// Paging reports whether b's big arrays are made from files.
func (b *Budget) Paging() bool {
	if b == nil {
		return false
	}
	b.paged.mu.Lock()
	defer b.paged.mu.Unlock()
	return b.paged.on
}

// Trims reports how many times the pager found the resident memory over the budget and trimmed
// the arrays.
func (b *Budget) Trims() int {
	b.paged.mu.Lock()
	defer b.paged.mu.Unlock()
	return b.paged.trims
}

// paged returns a paged array of n elements, or nil when b does not page, the array is small,
// or its file cannot be made (the caller then makes it in memory, as without a budget).
func paged[T ~uint8 | ~uint32 | ~uint64](b *Budget, n int) []T {
	var z T
	size := uintptr(n) * unsafe.Sizeof(z)
	if b == nil || size == 0 || size < b.pagedFrom() || !b.Paging() {
		return nil
	}
	mem, err := b.mapArray(size)
	if err != nil {
		b.kept.add(int(size), err)
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(mem))), n)
}

func (b *Budget) pagedFrom() uintptr {
	b.paged.mu.Lock()
	defer b.paged.mu.Unlock()
	if b.paged.from == 0 {
		return pagedMin
	}
	return b.paged.from
}

// mapArray makes a file of size bytes in b's directory, maps it and keeps it (step 2).
func (b *Budget) mapArray(size uintptr) ([]byte, error) {
	a, err := mapFile(b.Dir(), size)
	if err != nil {
		return nil, err
	}
	a.owned = true
	b.paged.mu.Lock()
	large := b.paged.pages == LargePages
	b.paged.mu.Unlock()
	if large {
		adviseLarge(a)
	}
	b.paged.add(a)
	return a.mem, nil
}

// pagedOf returns the paged array a is, if it is one of b's.
func pagedOf[T ~uint8 | ~uint32 | ~uint64](b *Budget, a []T) (pagedArray, bool) {
	if b == nil || cap(a) == 0 {
		return pagedArray{}, false
	}
	var z T
	p, found := b.paged.containing(uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(cap(a))*unsafe.Sizeof(z))
	return p, found && p.owned
}

// setAside ends the process's mapping of a paged array's pages and starts their write-back:
// what Spill does for an array in memory of its own, without a copy, for a column a phase does
// not read (Store.Out). Its pages come back as they are read.
func setAside(a pagedArray) {
	unmapPages(a)
	writeBack(a)
}

// track has the pager trim a read-only view of a spilled column too while it is mapped
// (Spilled.Map, View), when b pages.
func (b *Budget) track(view []byte) {
	if len(view) > 0 && b.Paging() {
		b.paged.add(pagedArray{fd: -1, mem: view, addr: uintptr(unsafe.Pointer(unsafe.SliceData(view))), size: uintptr(len(view))})
	}
}

// untrack ends track's, before the view is unmapped.
func (b *Budget) untrack(view []byte) {
	if len(view) == 0 || b == nil {
		return
	}
	p := &b.paged
	p.mu.Lock()
	defer p.mu.Unlock()
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(view)))
	if i, found := slices.BinarySearchFunc(p.arrays, addr, byAddr); found {
		p.arrays = slices.Delete(p.arrays, i, i+1)
	}
	if j := slices.Index(p.order, addr); j >= 0 {
		p.order = slices.Delete(p.order, j, j+1)
		if j < p.next {
			p.next--
		}
	}
}

func (p *pager) add(a pagedArray) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, _ := slices.BinarySearchFunc(p.arrays, a.addr, byAddr)
	p.arrays = slices.Insert(p.arrays, i, a)
	p.order = append(p.order, a.addr)
}

func byAddr(x pagedArray, addr uintptr) int { return cmp.Compare(x.addr, addr) }

// containing returns the paged array holding the bytes [addr, addr+n), if one does.
func (p *pager) containing(addr, n uintptr) (pagedArray, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, found := slices.BinarySearchFunc(p.arrays, addr, byAddr)
	if !found {
		i--
	}
	if i < 0 || i >= len(p.arrays) {
		return pagedArray{}, false
	}
	a := p.arrays[i]
	return a, addr >= a.addr && addr+n <= a.addr+a.size
}

// run is the pager's goroutine (step 3): every pagerTick it reads the resident memory and, past
// three quarters of limit, trims the arrays down to half of it. The write-back of the arrays
// trimmed runs on a goroutine of its own (writeBacks): it can wait for the disk, and the pager
// must not, while the phase it watches faults pages in.
func (p *pager) run(limit int64, stop <-chan struct{}, exited chan<- struct{}) {
	flush, flushed := make(chan pagedArray, 64), make(chan struct{})
	go writeBacks(flush, flushed)
	defer func() {
		close(flush)
		<-flushed
		close(exited)
	}()
	t := time.NewTicker(pagerTick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if Resident() > limit*3/4 {
			p.trim(limit/2, flush)
		}
	}
}

// writeBacks starts the write-back of each array it is sent.
func writeBacks(flush <-chan pagedArray, flushed chan<- struct{}) {
	defer close(flushed)
	for a := range flush {
		writeBack(a)
	}
}

// trim ends the process's mapping of the arrays' pages, the oldest arrays first from where the
// last trim stopped, until the resident memory is under target or every array was trimmed once,
// and has their write-back started (flush; an array is left for the kernel's own write-back
// when flush is full).
func (p *pager) trim(target int64, flush chan<- pagedArray) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trims++
	for tried := 0; tried < len(p.order) && Resident() > target; tried++ {
		if p.next >= len(p.order) {
			p.next = 0
		}
		addr := p.order[p.next]
		p.next++
		i, found := slices.BinarySearchFunc(p.arrays, addr, byAddr)
		if !found {
			continue
		}
		unmapPages(p.arrays[i])
		if p.arrays[i].fd >= 0 {
			select {
			case flush <- p.arrays[i]:
			default:
			}
		}
	}
}

// close stops the pager and lets every array's file go (step 5).
func (p *pager) close() {
	p.mu.Lock()
	stop, exited := p.stop, p.exited
	p.stop = nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-exited
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.arrays {
		if a.owned {
			closeArray(a)
		}
	}
	p.arrays, p.order, p.next = nil, nil, 0
}
