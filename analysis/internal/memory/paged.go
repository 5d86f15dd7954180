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
// count as its resident memory: the budget's pager keeps that under the budget itself, the way
// Eclipse MAT's index manager unloads an index a phase is done with. Whenever the resident
// memory passes the budget it ends the process's mapping of the arrays' pages, the oldest arrays
// first (a phase reads mostly what it made last), and starts their write-back, so that the page
// cache may drop them too; pages read again come back from the page cache, or from disk.
//
// Every file is unlinked as soon as it is made: nothing is left behind however the process
// ends, interrupted or killed. An array given back (Release) has its file's blocks freed with it.
//
// Steps, each a function below:
//  1. Budget.Page turns paging on for a budget, and starts the pager (startPager);
//  2. Make and Reserve ask mapArray for an array of pagedMin bytes or more, which makes the file
//     and maps it (mapFile), or answers nil when that fails, and the array is made as usual;
//  3. the pager (pager.run) reads the resident memory every pagerTick and, over the budget,
//     trims the arrays (pager.trim: unmapPages and writeBack);
//  4. release frees an array's pages and blocks (freePages) when it is given back;
//  5. Close unmaps every array and closes its file.

// pagedMin is the smallest array that is paged: below it the file and the mapping cost more
// than the memory they save.
const pagedMin = 1 << 20

// pagerTick is how often the pager reads the resident memory.
const pagerTick = 20 * time.Millisecond

// pagedArray is one array's file and its mapping.
type pagedArray struct {
	fd   int
	mem  []byte // the mapping
	addr uintptr
	size uintptr
}

// pager keeps a budget's paged arrays and the process's resident memory under the budget.
type pager struct {
	mu     sync.Mutex
	on     bool
	arrays []pagedArray // by address
	order  []uintptr    // addresses, oldest first: the order trims go in
	next   int          // where in order the next trim starts
	stop   chan struct{}
	exited chan struct{}
	trims  int // how many times the pager found the budget passed
}

// Page has b's big arrays made from files from now on (see the top of this file), and a pager
// keep the resident memory under b's limit. It does nothing for a budget without a limit, or
// where the system cannot map files.
func (b *Budget) Page() {
	if b == nil || b.limit <= 0 || !canPage {
		return
	}
	p := &b.paged
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on {
		return
	}
	p.on, p.stop, p.exited = true, make(chan struct{}), make(chan struct{})
	go p.run(b.limit, p.stop, p.exited)
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
	if b == nil || size < pagedMin || !b.Paging() {
		return nil
	}
	mem, err := b.mapArray(size)
	if err != nil {
		b.kept.add(int(size), err)
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(mem))), n)
}

// mapArray makes a file of size bytes in b's directory, maps it and keeps it (step 2).
func (b *Budget) mapArray(size uintptr) ([]byte, error) {
	a, err := mapFile(b.Dir(), size)
	if err != nil {
		return nil, err
	}
	p := &b.paged
	p.mu.Lock()
	defer p.mu.Unlock()
	i, _ := slices.BinarySearchFunc(p.arrays, a.addr, byAddr)
	p.arrays = slices.Insert(p.arrays, i, a)
	p.order = append(p.order, a.addr)
	return a.mem, nil
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

// run is the pager's goroutine (step 3): every pagerTick it reads the resident memory and, over
// limit, trims the arrays down to three quarters of it.
func (p *pager) run(limit int64, stop <-chan struct{}, exited chan<- struct{}) {
	defer close(exited)
	t := time.NewTicker(pagerTick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if Resident() > limit {
			p.trim(limit * 3 / 4)
		}
	}
}

// trim ends the process's mapping of the arrays' pages, the oldest arrays first from where the
// last trim stopped, until the resident memory is under target or every array was trimmed once,
// and starts their write-back.
func (p *pager) trim(target int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trims++
	for tried := 0; tried < len(p.order) && Resident() > target; tried++ {
		if p.next >= len(p.order) {
			p.next = 0
		}
		addr := p.order[p.next]
		p.next++
		if i, found := slices.BinarySearchFunc(p.arrays, addr, byAddr); found {
			unmapPages(p.arrays[i])
			writeBack(p.arrays[i])
		}
	}
}

// close stops the pager and unmaps and closes every array (step 5).
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
		closeArray(a)
	}
	p.arrays, p.order, p.next = nil, nil, 0
}
