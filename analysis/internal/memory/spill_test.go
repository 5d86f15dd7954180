package memory

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// scrambled is a column of n elements that differ from their neighbours.
func scrambled(n int) []uint32 {
	a := make([]uint32, n)
	for i := range a {
		a[i] = uint32(i*2654435761) ^ 0xdeadbeef
	}
	return a
}

func TestSpillRoundTrips(t *testing.T) {
	b := New(0, t.TempDir())
	a := scrambled(100_003)
	want := slices.Clone(a)
	s := Spill(b, a)
	if s.files == nil {
		t.Fatal("the column stayed in memory although the temporary directory is writable")
	}
	clear(a) // the caller's array is free for other use once spilled
	for _, i := range []int{0, 1, 77_777, len(want) - 1} {
		if v, err := s.At(i); err != nil || v != want[i] {
			t.Fatalf("At(%d) = %d, %v; want %d", i, v, err, want[i])
		}
	}
	if _, err := s.At(len(want)); err == nil {
		t.Fatal("At past the end must fail")
	}
	for range 2 { // Load keeps the file for the next time the column goes out
		if got, err := s.Load(nil); err != nil || !slices.Equal(got, want) {
			t.Fatalf("loaded column differs (err %v)", err)
		}
	}
	got, err := s.Restore(a[:10]) // too short: Restore allocates
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("restored column differs (err %v)", err)
	}
	s64 := Spill(b, []uint64{1 << 40, 3, ^uint64(0)})
	if got, err := s64.Restore(make([]uint64, 5)); err != nil || !slices.Equal(got, []uint64{1 << 40, 3, ^uint64(0)}) {
		t.Fatalf("uint64 column came back as %v, %v", got, err)
	}
	s8 := Spill(b, []uint8{4, 0, 255})
	if v, err := s8.At(2); err != nil || v != 255 {
		t.Fatalf("At(2) of a byte column = %d, %v", v, err)
	}
	s8.Close()
	if got, err := Spill(b, []uint32(nil)).Restore(nil); err != nil || len(got) != 0 {
		t.Fatalf("an empty column came back as %v, %v", got, err)
	}
}

func TestSpillKeepsTheColumnWhenItCannotWrite(t *testing.T) {
	b := New(0, filepath.Join(t.TempDir(), "missing"))
	n0, b0, _ := b.SpillFailures()
	a := []uint32{5, 6, 7}
	s := Spill(b, a)
	if s.files != nil {
		t.Fatal("spilled into a directory that does not exist")
	}
	if n, bytes, err := b.SpillFailures(); n != n0+1 || bytes != b0+12 || err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("SpillFailures() = %d, %d, %v after one failure; want %d, %d and the reason", n, bytes, err, n0+1, b0+12)
	}
	if v, err := s.At(1); err != nil || v != 6 {
		t.Fatalf("At(1) = %d, %v", v, err)
	}
	got, err := s.Restore(nil)
	if err != nil || &got[0] != &a[0] {
		t.Fatalf("want the kept column itself back, got %v, %v", got, err)
	}
	big := make([]uint32, 2*spillPart/4+1) // two parts, where there are two cores
	big[len(big)-1] = 9
	if s := Spill(b, big); s.files != nil || s.kept == nil {
		t.Fatal("a column in two parts spilled into a directory that does not exist")
	} else if v, err := s.At(len(big) - 1); err != nil || v != 9 {
		t.Fatalf("At(last) of the kept column = %d, %v", v, err)
	}
}

// A column of 2·spillPart bytes and more goes out as two files, written and read back on two
// cores; elements on either side of the split come back as they were.
func TestSpillInTwoParts(t *testing.T) {
	b := New(0, t.TempDir())
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: a column is written as one file")
	}
	a := make([]uint64, 2*spillPart/8+3) // odd: the second part is shorter
	for i := range a {
		a[i] = uint64(i) * 0x9E3779B97F4A7C15
	}
	want := slices.Clone(a)
	s := Spill(b, a)
	if len(s.files) != 2 {
		t.Fatalf("a column of %d bytes went out as %d file(s), want 2", 8*len(a), len(s.files))
	}
	clear(a)
	for _, i := range []int{0, s.part - 1, s.part, len(want) - 1} {
		if v, err := s.At(i); err != nil || v != want[i] {
			t.Fatalf("At(%d) = %d, %v; want %d", i, v, err, want[i])
		}
	}
	if s.part*8%os.Getpagesize() != 0 {
		t.Fatalf("the first part holds %d bytes, not whole pages", s.part*8)
	}
	mapAndCompare(t, s, want)
	got, err := s.Restore(nil)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("restored column differs (err %v)", err)
	}
}

// Map's view of a column, in one file or two, holds what went out, and ends with Unmap; a
// column can be viewed again, and loaded meanwhile.
func TestSpillMap(t *testing.T) {
	b := New(0, t.TempDir())
	for _, n := range []int{1, 1023, 100_003, 2*spillPart/4 + 5} {
		a := scrambled(n)
		want := slices.Clone(a)
		s := Spill(b, a)
		mapAndCompare(t, s, want)
		s.Close()
	}
	// A column kept in memory, its file unwritable, is its own view.
	b = New(0, filepath.Join(t.TempDir(), "missing"))
	s := Spill(b, []uint64{7, 8})
	if v, err := s.Map(); err != nil || !slices.Equal(v, []uint64{7, 8}) {
		t.Fatalf("kept column viewed as %v, %v", v, err)
	}
	s.Unmap()
}

func mapAndCompare[T uint32 | uint64](t *testing.T, s *Spilled[T], want []T) {
	t.Helper()
	for range 2 {
		v, err := s.Map()
		if err != nil || !slices.Equal(v, want) {
			t.Fatalf("view of %d elements differs (err %v)", len(want), err)
		}
		if runtime.GOOS == "linux" && s.files != nil && s.mapped == nil {
			t.Fatal("the column was read, not mapped")
		}
		if got, err := s.Load(nil); err != nil || !slices.Equal(got, want) {
			t.Fatalf("column loaded beside its view differs (err %v)", err)
		}
		s.Unmap()
		if s.mapped != nil {
			t.Fatal("Unmap left the view")
		}
	}
}

// View hands a column back for good: it holds what went out, one file or two, and stays valid
// after the Spilled has let its files go; a kept column is its own view.
func TestSpillView(t *testing.T) {
	b := New(0, t.TempDir())
	for _, n := range []int{1, 1023, 100_003, 2*spillPart/4 + 5} {
		a := scrambled(n)
		want := slices.Clone(a)
		s := Spill(b, a)
		clear(a)
		v, err := s.View()
		if err != nil || !slices.Equal(v, want) {
			t.Fatalf("view of %d elements differs (err %v)", n, err)
		}
		if s.files != nil || s.n != 0 {
			t.Fatalf("the Spilled still holds its files after View")
		}
		s.Close() // nothing left to close: the view stays
		runtime.GC()
		if !slices.Equal(v, want) {
			t.Fatalf("view of %d elements changed once the Spilled was closed", n)
		}
		if runtime.GOOS == "linux" && len(v) > 0 && &v[0] == &a[0] {
			t.Fatal("the view is the spilled array itself")
		}
	}
	b = New(0, filepath.Join(t.TempDir(), "missing"))
	kept := []uint64{7, 8}
	if v, err := Spill(b, kept).View(); err != nil || &v[0] != &kept[0] {
		t.Fatalf("kept column viewed as %v, %v; want the column itself", v, err)
	}
}

// ScanRange over the whole column hands it over in parts of the buffer's size, never across the two files, with
// the index of each part's first element; the parts make up the column.
func TestSpillScan(t *testing.T) {
	b := New(0, t.TempDir())
	for _, n := range []int{0, 1, 4095, 4096, 4097, 100_003, 2*spillPart/4 + 5} {
		a := scrambled(n)
		want := slices.Clone(a)
		s := Spill(b, a)
		for _, size := range []int{0, 1000, 4096} {
			var got []uint32
			err := s.ScanRange(make([]uint32, size), 0, s.Len(), func(lo int, part []uint32) {
				if lo != len(got) {
					t.Fatalf("n %d, buffer %d: a part at %d after %d elements", n, size, lo, len(got))
				}
				if size > 0 && len(part) > size || len(part) == 0 && n > 0 {
					t.Fatalf("n %d, buffer %d: a part of %d elements", n, size, len(part))
				}
				if s.part > 0 && lo/s.part != (lo+len(part)-1)/s.part {
					t.Fatalf("n %d: the part at %d (%d elements) spans two files of %d", n, lo, len(part), s.part)
				}
				got = append(got, part...)
			})
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("n %d, buffer %d: scanned %d elements, differing (err %v)", n, size, len(got), err)
			}
		}
		s.Close()
	}
	// Ranges, across the two files' boundary too, give their elements only.
	a := scrambled(2*spillPart/4 + 5)
	want := slices.Clone(a)
	s := Spill(b, a)
	mid := min(s.part, len(want)-5) // the files' boundary where there are two (one core writes one)
	for _, r := range [][2]int{{0, 0}, {0, 1}, {3, 9000}, {mid - 5, mid + 5}, {len(want) - 7, len(want)}} {
		var got []uint32
		if err := s.ScanRange(make([]uint32, 1000), r[0], r[1], func(lo int, part []uint32) {
			if lo != r[0]+len(got) {
				t.Fatalf("range %v: a part at %d after %d elements", r, lo, len(got))
			}
			got = append(got, part...)
		}); err != nil || !slices.Equal(got, want[r[0]:r[1]]) {
			t.Fatalf("range %v: scanned %d elements, differing (err %v)", r, len(got), err)
		}
	}
	if err := s.ScanRange(nil, 5, len(want)+1, func(int, []uint32) {}); err == nil {
		t.Fatal("a range past the column's end was scanned")
	}
	s.Close()
	s = Spill(b, []uint32{1, 2, 3})
	s.files[0].Close() // reading back fails
	if err := s.ScanRange(nil, 0, s.Len(), func(int, []uint32) {}); err == nil {
		t.Fatal("Scan of a column whose file cannot be read succeeded")
	}
}
