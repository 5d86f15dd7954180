//go:build linux

package memory

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// pagedBudget returns a paging budget of limit bytes whose files go to a directory of the test's
// own, and that directory.
func pagedBudget(t *testing.T, limit int64) (*Budget, string) {
	t.Helper()
	return pagedBudgetIn(t, limit, BasePages)
}

// pagedBudgetIn is pagedBudget with its arrays mapped in pages.
func pagedBudgetIn(t *testing.T, limit int64, pages Pages) (*Budget, string) {
	t.Helper()
	dir := t.TempDir()
	b := New(limit, dir)
	b.Page(pages)
	t.Cleanup(b.Close)
	if !b.Paging() {
		t.Fatal("a budget with a limit does not page")
	}
	return b, dir
}

// filesOpen counts the process's open files in dir, unlinked ones too.
func filesOpen(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

// A paged array is a file in the budget's directory, unlinked at once: it reads back what was
// written through every trim of the pager (whose limit this process is always over), reads as
// zeros once given back, and its file goes with the budget.
func TestPagedArraySurvivesTrims(t *testing.T) {
	b, dir := pagedBudget(t, 1)
	const n = 3 << 20 // 12 MB of uint32
	a := Make[uint32](b, n)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files left in the directory: want them unlinked at once", len(entries))
	}
	if filesOpen(t, dir) != 1 {
		t.Fatalf("%d files of the directory open, want the array's one", filesOpen(t, dir))
	}
	pattern := func(i int) uint32 { return uint32(i) * 2654435761 }
	for i := range a {
		a[i] = pattern(i)
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.Trims() < 3 && time.Now().Before(deadline) {
		time.Sleep(pagerTick)
	}
	if b.Trims() < 3 {
		t.Fatalf("the pager trimmed %d times in 5 s with the process over its limit", b.Trims())
	}
	for i := range a {
		if a[i] != pattern(i) {
			t.Fatalf("element %d reads %d after the trims, want %d", i, a[i], pattern(i))
		}
	}
	Release(b, a[n/2:])
	for _, i := range []int{n/2 + 4096, n - 1} {
		if a[i] != 0 {
			t.Fatalf("element %d reads %d once given back, want 0", i, a[i])
		}
	}
	if a[1] != pattern(1) || a[n/2-1] != pattern(n/2-1) {
		t.Error("giving back the second half changed the first")
	}
	b.Close()
	if filesOpen(t, dir) != 0 {
		t.Errorf("%d files of the directory open after Close", filesOpen(t, dir))
	}
	// A straggler of a cancelled phase reads zeros there, rather than faulting the process.
	if a[1] != 0 {
		t.Errorf("a paged array reads %d after Close, want 0", a[1])
	}
}

// Small arrays, and every array of a budget without a limit, are made in memory as usual; an
// array whose file cannot be made too, and the budget says so.
func TestPagedOnlyWhenAsked(t *testing.T) {
	b, dir := pagedBudget(t, 1)
	Make[uint64](b, 16)
	Reserve[uint32](b, 1000)
	if filesOpen(t, dir) != 0 {
		t.Error("arrays under pagedMin were paged")
	}
	b.PageFrom(1)
	Make[uint64](b, 16)
	if filesOpen(t, dir) != 1 {
		t.Error("PageFrom(1) did not page a small array")
	}
	none := New(0, dir)
	defer none.Close()
	none.Page(BasePages)
	if none.Paging() {
		t.Error("a budget without a limit pages")
	}
	gone := New(1, dir+"/missing")
	defer gone.Close()
	gone.Page(BasePages)
	a := Make[uint32](gone, pagedMin)
	a[len(a)-1] = 7
	if n, _, err := gone.SpillFailures(); n != 1 || err == nil {
		t.Errorf("an array whose file could not be made: %d failures (%v), want 1", n, err)
	}
}

// A view of a spilled column under a paging budget is trimmed too, and reads the same.
func TestSpilledViewTrimmed(t *testing.T) {
	b, _ := pagedBudget(t, 1)
	col := make([]uint32, 1<<20)
	for i := range col {
		col[i] = uint32(i)
	}
	s := Spill(b, col)
	defer s.Close()
	v, err := s.Map()
	if err != nil {
		t.Fatal(err)
	}
	before := b.Trims()
	for b.Trims() < before+2 {
		time.Sleep(pagerTick)
	}
	for i := range v {
		if v[i] != uint32(i) {
			t.Fatalf("element %d of the view reads %d after trims", i, v[i])
		}
	}
	s.Unmap()
	b.paged.mu.Lock()
	left := len(b.paged.arrays)
	b.paged.mu.Unlock()
	if left != 0 {
		t.Errorf("%d mappings tracked after the view ended, want none", left)
	}
}

// With LargePages a paged array's mapping carries the advice for huge pages (smaps' VmFlags
// "hg"), and with BasePages it does not; either way the array reads back what was written
// through the pager's trims.
func TestPagedArrayPages(t *testing.T) {
	for _, c := range []struct {
		pages Pages
		want  bool
	}{{BasePages, false}, {LargePages, true}} {
		b, _ := pagedBudgetIn(t, 1, c.pages)
		a := Make[uint64](b, 1<<20) // 8 MB
		for i := range a {
			a[i] = uint64(i) * 0x9E3779B97F4A7C15
		}
		if got := advisedHuge(t, uintptr(unsafe.Pointer(unsafe.SliceData(a)))); got != c.want {
			t.Errorf("pages %d: mapping advised for huge pages: %v, want %v", c.pages, got, c.want)
		}
		deadline := time.Now().Add(5 * time.Second)
		for b.Trims() < 2 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		for i := range a {
			if a[i] != uint64(i)*0x9E3779B97F4A7C15 {
				t.Fatalf("pages %d: element %d reads %#x after %d trims", c.pages, i, a[i], b.Trims())
			}
		}
	}
}

// advisedHuge reads whether the mapping starting at addr has the huge-page advice, from
// /proc/self/smaps.
func advisedHuge(t *testing.T, addr uintptr) bool {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(fields[0], "-"); ok && !strings.HasSuffix(fields[0], ":") {
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= start && uint64(addr) < end
			continue
		}
		if in && fields[0] == "VmFlags:" {
			return slices.Contains(fields[1:], "hg")
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return false
}
