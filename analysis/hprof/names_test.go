package hprof_test

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
)

// symbolsFile writes classes whose names lie among other symbols, in three runs of UTF8
// records split by LOAD CLASS records, with one symbol longer than any read buffer.
func symbolsFile(idSize int) []byte {
	b := hproftest.New(idSize)
	b.Str("run one, not a class name")
	b.LoadClass(100, "java/util/Foo")
	b.Str(strings.Repeat("x", 300<<10))
	b.LoadClass(101, "[Ljava/lang/Object;")
	for i := range 5000 {
		b.Str("filler " + strings.Repeat("y", i%97))
	}
	b.LoadClass(102, "Bar")
	b.Str("last")
	b.StartSegment(false)
	b.EndSegment()
	b.EndDump()
	return b.Bytes()
}

// Class names taken from an index that stepped over the symbols are those a reader of every
// record finds, and no other symbol is kept.
func TestClassNamesFromSkippedSymbols(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		data := symbolsFile(idSize)
		all := hprof.NewSchema(idSize)
		if _, err := hprof.ReadIndex(bytes.NewReader(data), int64(len(data)), func(rec *hprof.Record) error { return all.Add(rec) }); err != nil {
			t.Fatal(err)
		}
		s := hprof.NewSchema(idSize)
		idx, err := hprof.ReadIndexWith(bytes.NewReader(data), int64(len(data)), hprof.IndexOptions{SkipUTF8: true, Top: func(rec *hprof.Record) error {
			if rec.Tag == hprof.TagUTF8 {
				t.Fatalf("id size %d: a UTF8 record at offset %d reached Top", idSize, rec.Offset)
			}
			return s.Add(rec)
		}})
		if err != nil {
			t.Fatal(err)
		}
		// Each LOAD CLASS writes its name first, so the runs are: one string and a name; the
		// long string and a name; the fillers and a name; "last".
		if len(idx.UTF8) != 4 || len(idx.Segments) != 1 {
			t.Fatalf("id size %d: %d runs of symbols, %d segments: %+v", idSize, len(idx.UTF8), len(idx.Segments), idx.UTF8)
		}
		if err := s.TakeNames(bytes.NewReader(data), idx.UTF8); err != nil {
			t.Fatal(err)
		}
		for _, id := range []uint64{100, 101, 102} {
			if got, want := s.Name(id), all.Name(id); got != want || strings.HasPrefix(got, "class@") {
				t.Errorf("id size %d: class %d named %q, want %q", idSize, id, got, want)
			}
		}
		if len(s.Strings) != 3 {
			t.Errorf("id size %d: %d symbols kept, want the 3 class names", idSize, len(s.Strings))
		}
	}
}

// A file that no longer holds the symbols the index found, or holds something else there, is an
// error that says where.
func TestClassNamesFromChangedFile(t *testing.T) {
	data := symbolsFile(8)
	s, idx := indexSkippingSymbols(t, data)
	cut := idx.UTF8[2].Offset + 100
	if err := s.TakeNames(bytes.NewReader(data[:cut]), idx.UTF8); err == nil || !strings.Contains(err.Error(), "offset") {
		t.Errorf("symbols from a shorter file: %v", err)
	}
	moved := append([]byte(nil), data...)
	moved[idx.UTF8[3].Offset] = byte(hprof.TagLoadClass)
	if err := s.TakeNames(bytes.NewReader(moved), idx.UTF8); err == nil || !strings.Contains(err.Error(), "where the index had symbols") {
		t.Errorf("symbols overwritten: %v", err)
	}
}

// Stepping over symbols does not hide a truncated one: the index fails as it does when it
// decodes them.
func TestSkippedSymbolTruncated(t *testing.T) {
	data := symbolsFile(8)
	_, idx := indexSkippingSymbols(t, data)
	for _, end := range []int64{idx.UTF8[1].Offset + 5, idx.UTF8[1].Offset + 1000, idx.UTF8[2].End - 3} {
		cut := data[:end]
		_, err := hprof.ReadIndexWith(bytes.NewReader(cut), end, hprof.IndexOptions{SkipUTF8: true})
		_, plain := hprof.ReadIndex(bytes.NewReader(cut), end, nil)
		if err == nil || !hprof.Truncated(err) || plain == nil || err.Error() != plain.Error() {
			t.Errorf("cut at %d: skipping %v, decoding %v", end, err, plain)
		}
	}
}

// indexSkippingSymbols indexes data stepping over its symbols, with a schema fed its other records.
func indexSkippingSymbols(t *testing.T, data []byte) (*hprof.Schema, *hprof.Index) {
	t.Helper()
	s := hprof.NewSchema(8)
	idx, err := hprof.ReadIndexWith(bytes.NewReader(data), int64(len(data)), hprof.IndexOptions{SkipUTF8: true, Top: s.Add})
	if err != nil {
		t.Fatal(err)
	}
	return s, idx
}

// Taken after the class dumps, the names are those Prune keeps of every symbol: class names and
// the names of the dumped classes' fields and static fields, even when they lie after the heap.
func TestNamesOfFieldsFromSkippedSymbols(t *testing.T) {
	b := hproftest.New(8)
	b.Str("not a name")
	b.LoadClass(0x10, "java/lang/Object")
	b.LoadClass(0x20, "app/Node")
	b.StartSegment(false)
	b.Class(0x10, 0, "", nil, nil)
	b.Class(0x20, 0x10, "", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}, {Name: "count", Type: hprof.TypeInt}}, map[string]uint64{"head": 0x100})
	b.EndSegment()
	b.EndDump()
	b.Str("after the heap")
	data := b.Bytes()

	all := hprof.NewSchema(8)
	idx, err := hprof.ReadIndex(bytes.NewReader(data), int64(len(data)), all.Add)
	if err != nil {
		t.Fatal(err)
	}
	s, skipped := indexSkippingSymbols(t, data)
	for _, seg := range idx.Segments {
		r := hprof.NewSegmentReader(bytes.NewReader(data), idx, seg, make([]byte, 64))
		hproftest.Records(t, r, func(rec *hprof.Record) {
			if rec.Tag == hprof.TagClassDump {
				if err := all.Add(rec); err != nil {
					t.Fatal(err)
				}
				if err := s.Add(rec); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	all.Prune()
	if err := s.TakeNames(bytes.NewReader(data), skipped.UTF8); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(s.Strings, all.Strings) || len(s.Strings) != 5 {
		t.Errorf("names taken: %v\nkept of every symbol: %v", s.Strings, all.Strings)
	}
}
