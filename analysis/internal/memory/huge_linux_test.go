//go:build linux

package memory

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// resident counts the pages of a that are in memory.
func resident(t *testing.T, a []uint64) int {
	t.Helper()
	n, _, err := residentPages(unsafe.Pointer(unsafe.SliceData(a)), uintptr(len(a))*8)
	runtime.KeepAlive(a)
	if err != nil {
		t.Skipf("mincore: %v", err)
	}
	return n
}

// A large array from Make becomes resident without the caller touching it; one from Reserve
// does not.
func TestMakeFaultsPagesInAhead(t *testing.T) {
	b := New(0, "")
	defer b.Close()
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the faulter works only with two cores or more")
	}
	// Memory the program used before would come back cleared by the allocator, so resident.
	debug.FreeOSMemory()
	reserved := Reserve[uint64](b, hugeMin/8*2)
	// The heap may still hand back a few pages an earlier test left resident (a run with
	// -count=3 did): what Reserve is judged by is what came in after it returned.
	already := resident(t, reserved)
	quarter := len(reserved) / 4
	margin := hugePage / 8
	alreadyOutside := resident(t, reserved[2*quarter+margin:]) + resident(t, reserved[:quarter-margin])
	made := Make[uint64](b, hugeMin/8*2)
	pages := len(made) * 8 / 4096
	deadline := time.Now().Add(20 * time.Second)
	for resident(t, made) < pages && time.Now().Before(deadline) && !b.faults.off.Load() {
		time.Sleep(10 * time.Millisecond)
	}
	if b.faults.off.Load() {
		t.Skip("the kernel has no MADV_POPULATE_WRITE")
	}
	if got := resident(t, made); got < pages {
		t.Errorf("Make: %d of %d pages resident after waiting", got, pages)
	}
	// A huge page at either end may be shared with a neighbour that was faulted in.
	slack := 2 * hugePage / 4096
	if got := resident(t, reserved); got > already+slack {
		t.Errorf("Reserve: %d of %d pages resident (%d when it returned), none touched", got, pages, already)
	}
	// FaultAhead brings in the pages of the range asked for, and not the rest.
	FaultAhead(b, reserved, quarter, 2*quarter)
	for resident(t, reserved[quarter:2*quarter]) < pages/4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := resident(t, reserved[quarter:2*quarter]); got < pages/4 {
		t.Errorf("FaultAhead: %d of %d pages of the range resident after waiting", got, pages/4)
	}
	// The range's ends lie in huge pages, which come in whole.
	if got := resident(t, reserved[2*quarter+margin:]) + resident(t, reserved[:quarter-margin]); got > alreadyOutside+slack {
		t.Errorf("FaultAhead: %d pages resident outside the range (%d before)", got, alreadyOutside)
	}
	runtime.KeepAlive(reserved)
}

// Populate makes every page of an array from Reserve resident, counting the bytes, and leaves
// what the array holds as it was.
func TestPopulate(t *testing.T) {
	b := New(0, "")
	defer b.Close()
	debug.FreeOSMemory()
	for _, n := range []int{3 << 10, hugeMin / 8 * 2} { // 4 KB pages, and huge ones
		a := Reserve[uint64](b, n)
		a[7] = 42 // written while the rest is not resident
		var done atomic.Int64
		if !Populate(b, a, &done) {
			t.Skip("the kernel has no MADV_POPULATE_WRITE")
		}
		if got, want := done.Load(), int64(n*8); got != want {
			t.Errorf("Populate of %d bytes counted %d", want, got)
		}
		if got, pages := resident(t, a), n*8/4096; got < pages {
			t.Errorf("Populate: %d of %d pages resident", got, pages)
		}
		for i, v := range a {
			if v != 0 && !(i == 7 && v == 42) {
				t.Fatalf("Populate changed element %d to %d", i, v)
			}
		}
		if a[7] != 42 {
			t.Fatalf("Populate changed element 7 to %d", a[7])
		}
	}
	var done atomic.Int64
	if !Populate(b, []uint32(nil), &done) || done.Load() != 0 {
		t.Error("Populate of nothing must succeed and count nothing")
	}
}

// Resident counts the pages the process has touched: 64 MB more once they are written.
func TestResident(t *testing.T) {
	// A mapping of its own: memory from the heap may already be resident (an earlier test's).
	a, err := syscall.Mmap(-1, 0, 64<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(a)
	before := Resident()
	for i := 0; i < len(a); i += 4096 {
		a[i] = 1
	}
	after := Resident()
	if before <= 0 || after-before < 60<<20 {
		t.Errorf("resident %d bytes before 64 MB were written, %d after", before, after)
	}
}

// A column whose file cannot be written to the end keeps its contents: the chunks already
// written, whose memory was given back, are read back from the file. The file size limit makes
// the writes fail part-way (the runtime ignores SIGXFSZ, so write returns EFBIG).
func TestSpillFailingPartWayKeepsTheColumn(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	lim := old
	defer syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	b := New(0, "")
	defer b.Close()
	n0, _, _ := b.SpillFailures()
	// Two parts of 12 MB, each failing in its second chunk; then two parts of which only the
	// first, one element longer, passes the limit, so that the second, written whole and given
	// back, must come back from its file.
	for _, n := range []int{3 * spillChunk / 4, 2*(spillChunk+spillChunk/4)/4 + 1} {
		lim.Cur = spillChunk + spillChunk/4
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Skip(err)
		}
		a := make([]uint32, n)
		for i := range a {
			a[i] = uint32(i) * 2654435761
		}
		s := Spill(b, a)
		syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
		if s.files != nil {
			t.Fatalf("%d elements: the column went out although its files could not be written whole", n)
		}
		if n, _, err := b.SpillFailures(); n == n0 || err == nil {
			t.Errorf("SpillFailures: %d after %d, %v", n, n0, err)
		}
		for i, v := range a {
			if v != uint32(i)*2654435761 {
				t.Fatalf("%d elements: element %d is %d after the failed spill", n, i, v)
			}
		}
	}
}

// Spilling gives the column's memory back as it goes, before the caller drops the array.
func TestSpillGivesMemoryBack(t *testing.T) {
	b := New(0, "")
	defer b.Close()
	a := make([]uint64, 64<<20/8)
	for i := range a {
		a[i] = uint64(i)
	}
	before := Resident()
	s := Spill(b, a)
	after := Resident()
	runtime.KeepAlive(a)
	if s.files == nil {
		t.Skip("the column could not be written out")
	}
	defer s.Close()
	if before-after < 56<<20 {
		t.Errorf("resident %d MB before spilling 64 MB, %d MB after", before>>20, after>>20)
	}
	if v, err := s.At(len(a) - 1); err != nil || v != uint64(len(a)-1) {
		t.Errorf("At(last) = %d, %v", v, err)
	}
}

// A smaller array from Make has every page written (and so in memory) when Make returns, so
// that a caller reading an element before writing it faults once, not twice; one from Reserve
// does not.
func TestMakeWritesSmallArraysPages(t *testing.T) {
	b := New(0, "")
	defer b.Close()
	debug.FreeOSMemory() // freed memory would come back cleared by the allocator, so resident
	made := Make[uint64](b, 4<<20/8)
	if got, want := resident(t, made), len(made)*8/4096; got < want {
		t.Errorf("%d of the 4 MB array's %d pages resident after Make", got, want)
	}
	for _, v := range made {
		if v != 0 {
			t.Fatal("Make's array is not zero")
		}
	}
	debug.FreeOSMemory()
	// The heap may hand back pages an earlier test left resident: of three arrays, one at least
	// comes from fresh memory, and all three would be resident if Reserve wrote them.
	var reserved [3][]uint64
	fewest := len(made)
	for i := range reserved {
		reserved[i] = Reserve[uint64](b, 4<<20/8)
		fewest = min(fewest, resident(t, reserved[i]))
	}
	if fewest > 1 {
		t.Errorf("%d pages or more of each 4 MB array from Reserve resident", fewest)
	}
	runtime.KeepAlive(reserved)
}

// Cached sees a file just written as in the page cache, and the same file evicted from it as
// not.
func TestCached(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "cached")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 8<<20)); err != nil {
		t.Fatal(err)
	}
	if !Cached(f, 4<<20, 4<<20) {
		t.Error("a file just written is not cached")
	}
	if !Cached(f, 0, 0) || !Cached(f, -1, 10) {
		t.Error("an empty or negative range, which cannot tell, is not reported cached")
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	const dontNeed = 4 // POSIX_FADV_DONTNEED
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, dontNeed, 0, 0); e != 0 {
		t.Skipf("fadvise: %v", e)
	}
	var fs syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &fs); err != nil || fs.Type == 0x01021994 {
		// A file system in memory (tmpfs) keeps its pages: nothing to tell there.
		t.Skip("the temporary directory is in memory")
	}
	if Cached(f, 4<<20, 4<<20) {
		t.Error("a file evicted from the page cache is still cached")
	}
}

// GiveCache drops the given file's page cache from its end down, as much as each array made
// takes, and nothing once stopped.
func TestGiveCache(t *testing.T) {
	path := t.TempDir() + "/dump"
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const mb = 1 << 20
	if _, err := f.Write(make([]byte, 12*mb)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil { // dirty pages are not dropped
		t.Fatal(err)
	}
	var fs syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &fs); err != nil || fs.Type == 0x01021994 {
		t.Skip("the temporary directory is in memory (tmpfs), which keeps its pages")
	}
	cached := func(i int) bool { return Cached(f, int64(i)*4*mb, 4*mb) }
	if !cached(0) || !cached(1) || !cached(2) {
		t.Fatal("a file just written and synced is not in the page cache")
	}
	b := New(0, "")
	defer b.Close()
	b.cache.batch = 0 // an array's size at a time
	stop, err := b.GiveCache(path)
	if err != nil {
		t.Fatal(err)
	}
	given := b.cacheGiven()
	Make[uint8](b, donateMin-1) // too small to give for
	Make[uint64](b, 4*mb/8)
	if !cached(0) || !cached(1) || cached(2) {
		t.Errorf("after a 4 MB array, cached by 4 MB part: %v %v %v, want the last part dropped", cached(0), cached(1), cached(2))
	}
	if got := b.cacheGiven() - given; got != 4*mb {
		t.Errorf("%d bytes given for a 4 MB array", got)
	}
	a := Reserve[uint32](b, hugeMin/4) // large enough to be faulted in ahead
	FaultAhead(b, a, 0, mb)            // the pages of 4 MB more
	if !cached(0) || cached(1) {
		t.Errorf("after 4 MB faulted ahead, cached by part: %v %v, want the middle part dropped too", cached(0), cached(1))
	}
	stop()
	Make[uint64](b, 4*mb/8)
	if !cached(0) {
		t.Error("an array made after stop dropped the file's cache")
	}
	if _, err := b.GiveCache(path + ".missing"); err == nil {
		t.Error("a missing file gave no error")
	}
	if _, err := b.GiveCache(t.TempDir()); err == nil {
		t.Error("a directory gave no error")
	}
}

// Populate gives the cache for the pages it faults in, and giving stops at the file's start.
func TestGiveCachePopulateAndEnd(t *testing.T) {
	path := t.TempDir() + "/dump"
	if err := os.WriteFile(path, make([]byte, 6<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	b := New(0, "")
	defer b.Close()
	b.cache.batch = 0
	stop, err := b.GiveCache(path)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	given := b.cacheGiven()
	var done atomic.Int64
	if !Populate(b, Reserve[uint64](b, 4<<20/8), &done) {
		t.Skip("the system cannot populate pages")
	}
	Make[uint64](b, 4<<20/8)
	if got := b.cacheGiven() - given; got != 6<<20 {
		t.Errorf("%d bytes given for 8 MB of arrays from a 6 MB file, want the file's 6 MB", got)
	}
	Make[uint64](b, 4<<20/8)
	if got := b.cacheGiven() - given; got != 6<<20 {
		t.Errorf("%d bytes given after the whole file was", got)
	}
}

// The cache goes a batch at a time: arrays take what the last batch left before another is
// dropped, and an array larger than the rest of a batch and another drops what it lacks.
func TestGiveCacheInBatches(t *testing.T) {
	path := t.TempDir() + "/dump"
	if err := os.WriteFile(path, make([]byte, 64<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	b := New(0, "")
	defer b.Close()
	b.cache.batch = 8 << 20
	stop, err := b.GiveCache(path)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	given := b.cacheGiven()
	for i, c := range []struct {
		make, given int64 // MB
	}{{3, 8}, {3, 8}, {3, 16}, {1, 16}, {20, 30}, {6, 38}, {2, 38}, {1, 46}} {
		Make[uint8](b, int(c.make<<20))
		if got := (b.cacheGiven() - given) >> 20; got != c.given {
			t.Errorf("after array %d (%d MB): %d MB given, want %d", i, c.make, got, c.given)
		}
	}
}

// Release gives an array's whole pages back at once: they leave memory and read as zeros. A
// Scratch's Free does that to every array it holds, and forgets them.
func TestReleaseGivesPagesBack(t *testing.T) {
	b := New(0, "")
	defer b.Close()
	a := make([]uint64, 64<<10) // 512 KB
	for i := range a {
		a[i] = uint64(i) | 1
	}
	if resident(t, a) == 0 {
		t.Fatal("a written array is not resident")
	}
	Release(b, a[:10]) // the whole capacity goes, not only the slice's length
	if n := resident(t, a); n > 1 {
		t.Fatalf("%d pages of a released array still resident", n)
	}
	for i, v := range a {
		if v != 0 {
			t.Fatalf("element %d reads %d after Release", i, v)
		}
	}
	s := Scratch{Budget: b}
	c := make([]uint64, 64<<10)
	for i := range c {
		c[i] = 1
	}
	s.Release64(c)
	s.Free()
	if len(s.free64) != 0 || resident(t, c) > 1 {
		t.Fatalf("Free kept %d arrays, %d pages of them resident", len(s.free64), resident(t, c))
	}
	// Trim gives back the arrays it forgets, and only those.
	big, small := make([]uint32, 256<<10), make([]uint32, 128<<10)
	for i := range big {
		big[i] = 1
	}
	for i := range small {
		small[i] = 1
	}
	s.Release(small, big)
	s.Trim(1)
	if len(s.free) != 1 || &s.free[0].a[0] != &big[0] {
		t.Fatal("Trim(1) did not keep the largest array")
	}
	if n := resident(t, words(small)); n > 1 {
		t.Fatalf("%d pages of the array Trim forgot still resident", n)
	}
	if n := resident(t, words(big)); n < 255 {
		t.Fatalf("only %d pages of the array Trim kept resident", n)
	}
}

// words views a uint32 array as the uint64 words resident counts over.
func words(a []uint32) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(a))), len(a)/2)
}

// FaultAhead faults in the pages asked for, of an array of any size, on the faulter; once
// FaultsDone returns they are in. Released, they go again.
func TestFaultAheadThenFaultsDone(t *testing.T) {
	b := New(0, "")
	defer b.Close()
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the faulter works only with two cores or more")
	}
	debug.FreeOSMemory()
	a := Reserve[uint64](b, 1<<20)[:0] // 8 MB of 4 KB pages
	FaultAhead(b, a, 0, 64<<10)        // the first 512 KB
	FaultsDone(b)
	if b.faults.off.Load() {
		t.Skip("no madvise to populate with")
	}
	if in := resident(t, a[:64<<10]); in < 128 {
		t.Fatalf("%d pages of the 128 asked for resident after FaultsDone", in)
	}
	Release(b, a[32<<10:64<<10]) // and on to the end of the array
	if in := resident(t, a[32<<10:64<<10]); in > 0 {
		t.Fatalf("%d pages resident after they were released", in)
	}
	if in := resident(t, a[:32<<10]); in < 64 {
		t.Fatalf("%d pages of the first half resident after the second was released, want 64", in)
	}
}
