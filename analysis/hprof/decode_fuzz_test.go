package hprof_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
	"github.com/heapledger/heapledger/fixtures/heapdumps"
)

// FuzzDecodePathsAgree reads every input along each path that decodes HPROF records and checks
// that they agree, record by record, on every field they decode and on where and how the input
// is wrong:
//   - Next in file order, with its fast path (instances and primitive arrays of 8-byte ids
//     decoded straight from the buffer) and with the general path only;
//   - Headers in batches, with Next for the records it leaves;
//   - the index walk (ReadIndexWith, symbols read or stepped over) with a segment reader per
//     heap-dump segment, its buffer small (records straddle its edge) or large;
//   - Next on the gzip-compressed input, inflated as it is read;
//   - DecodeClassDump on each CLASS DUMP Next measured, which must decode it in full.
//
// The seeds are synthetic files (4- and 8-byte ids, records HotSpot rarely writes) and a real
// dump of the heap-dump fixture, whole (not when fuzzing) and as pieces of its segments small
// enough to mutate.
func FuzzDecodePathsAgree(f *testing.F) {
	for _, idSize := range []int{4, 8} {
		f.Add(sample(idSize))
		b := hproftest.New(idSize)
		b.Chain(0x100, 0x20)
		f.Add(b.Bytes())
	}
	f.Add(hproftest.DamagedFirstDump(true, 3))
	dump, err := os.ReadFile(heapdumps.Dump(f))
	if err != nil {
		f.Fatal(err)
	}
	if !fuzzing() {
		f.Add(dump)
	}
	for _, piece := range fixturePieces(f, dump, 4<<10) {
		f.Add(piece)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := inOrder(data, false)
		general, err := inOrder(data, true)
		agree(t, "Next, general path only", want, wantErr, general, err)
		headers, err := byHeaders(data)
		agree(t, "Headers", headerView(want), wantErr, headers, err)
		zipped, err := gzipped(data)
		if err != nil {
			// The offsets of a compressed input's errors count inflated bytes and say so.
			err = errors.New(strings.ReplaceAll(err.Error(), " of the inflated data", ""))
		}
		agree(t, "gzip-compressed", want, wantErr, zipped, err)
		if wantErr != nil {
			return // an index of a damaged file may stop elsewhere, or never read the damage
		}
		for _, skipUTF8 := range []bool{false, true} {
			for _, buf := range []int{64, 1 << 20} {
				got, err := bySegments(data, skipUTF8, buf)
				if err != nil {
					t.Fatalf("index (symbols stepped over: %v), segment buffer %d: %v; in order: no error", skipUTF8, buf, err)
				}
				w := want
				if skipUTF8 {
					w = slices.DeleteFunc(slices.Clone(want), func(r record) bool { return r.Tag == hprof.TagUTF8 })
				}
				agree(t, fmt.Sprintf("index (symbols stepped over: %v), segment buffer %d", skipUTF8, buf), w, nil, got, nil)
			}
		}
	})
}

// fuzzing reports whether the test binary runs the fuzzer (go test -fuzz), which mutates every
// seed: a whole dump of megabytes is a seed only when the seeds run as a test.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// agree fails t unless the path named got what reading in file order got: the same records
// and the same error (or none).
func agree(t *testing.T, path string, want []record, wantErr error, got []record, gotErr error) {
	t.Helper()
	for i := range min(len(want), len(got)) {
		if !same(want[i], got[i]) {
			t.Fatalf("%s: record %d is\n%+v\nin order:\n%+v", path, i, got[i], want[i])
		}
	}
	if len(want) != len(got) {
		t.Fatalf("%s: %d records, in order %d (error %v; in order %v)", path, len(got), len(want), gotErr, wantErr)
	}
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		t.Fatalf("%s: error %v\nin order: %v", path, gotErr, wantErr)
	}
}

// record is one record a path read: its fields, the body copied, and for a CLASS DUMP what
// DecodeClassDump makes of that body.
type record struct {
	hprof.Record
	class string
}

func same(a, b record) bool {
	x, y := a.Record, b.Record
	return x.Tag == y.Tag && x.Offset == y.Offset && x.Dump == y.Dump && x.ID == y.ID && x.Class == y.Class &&
		x.NameID == y.NameID && x.Serial == y.Serial && x.Frame == y.Frame && x.Length == y.Length &&
		x.Elem == y.Elem && bytes.Equal(x.Data, y.Data) && a.class == b.class
}

func keep(rec *hprof.Record, idSize int) record {
	k := record{Record: *rec}
	k.Data = bytes.Clone(rec.Data)
	if rec.Tag == hprof.TagClassDump {
		cd, err := hprof.DecodeClassDump(rec.ID, rec.Data, idSize, rec.Offset)
		k.class = fmt.Sprintf("%+v %v", cd, err)
	}
	return k
}

// headerView is what Headers decodes: of an instance its header and field values, of a
// primitive array its header; every other record whole.
func headerView(recs []record) []record {
	out := make([]record, len(recs))
	for i, r := range recs {
		switch r.Tag {
		case hprof.TagInstanceDump:
			r = header(hprof.Header{Tag: r.Tag, ID: r.ID, Class: r.Class, Offset: r.Offset}, r.Data)
		case hprof.TagPrimArrayDump:
			r = header(hprof.Header{Tag: r.Tag, ID: r.ID, Elem: r.Elem, Length: r.Length, Offset: r.Offset}, nil)
		}
		out[i] = r
	}
	return out
}

func header(h hprof.Header, fields []byte) record {
	return record{Record: hprof.Record{Tag: h.Tag, Offset: h.Offset, ID: h.ID, Class: h.Class, Length: h.Length, Elem: h.Elem, Data: bytes.Clone(fields)}}
}

// nextAll appends every record r's Next gives to out.
func nextAll(r *hprof.Reader, out []record) ([]record, error) {
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, keep(rec, r.IDSize))
	}
}

// inOrder reads data with Next, with or without its fast path.
func inOrder(data []byte, generalOnly bool) ([]record, error) {
	r, err := hprof.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if generalOnly {
		hprof.GeneralPathOnly(r)
	}
	return nextAll(r, nil)
}

// gzipped reads data compressed, as a dump taken with jcmd GC.heap_dump -gz is read.
func gzipped(data []byte) ([]record, error) {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(data)
	w.Close()
	r, err := hprof.NewReader(bytes.NewReader(z.Bytes()))
	if err != nil {
		return nil, err
	}
	return nextAll(r, nil)
}

// byHeaders reads data with Headers in small batches (so that batches end at every kind of
// record) and Next for what they leave.
func byHeaders(data []byte) ([]record, error) {
	r, err := hprof.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if r.IDSize != 8 { // Headers decodes 8-byte ids only: its callers use Next for the others
		recs, err := nextAll(r, nil)
		return headerView(recs), err
	}
	var out []record
	hs, fields := make([]hprof.Header, 3), make([][]byte, 3)
	for {
		n, rec, err := r.Headers(hs, fields)
		for i, h := range hs[:n] {
			if h.Tag == hprof.TagInstanceDump {
				out = append(out, header(h, fields[i]))
			} else {
				out = append(out, header(h, nil))
			}
		}
		if n > 0 {
			continue
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, headerView([]record{keep(rec, r.IDSize)})...)
	}
}

// bySegments reads data as the analysis reads an uncompressed file: the index walk reads the
// top-level records (stepping over the symbols with skipUTF8) and a reader with a buffer of buf
// bytes reads each heap-dump segment. The records come in file order.
func bySegments(data []byte, skipUTF8 bool, buf int) ([]record, error) {
	ra := bytes.NewReader(data)
	type part struct {
		top record
		seg *hprof.Segment
	}
	var parts []part
	idx, err := hprof.ReadIndexWith(ra, int64(len(data)), hprof.IndexOptions{
		SkipUTF8: skipUTF8,
		Top:      func(rec *hprof.Record) error { parts = append(parts, part{top: keep(rec, 0)}); return nil },
		Segment:  func(_ *hprof.Index, s hprof.Segment) error { parts = append(parts, part{seg: &s}); return nil },
	})
	if err != nil {
		return nil, err
	}
	var out []record
	for _, p := range parts {
		if p.seg == nil {
			// Top-level records never hold a CLASS DUMP: no id size is needed to describe them.
			out = append(out, p.top)
			continue
		}
		out = append(out, record{Record: hprof.Record{Tag: p.seg.Tag, Offset: p.seg.Offset, Dump: p.seg.Dump}})
		if out, err = nextAll(hprof.NewSegmentReader(ra, idx, *p.seg, make([]byte, buf)), out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// fixturePieces cuts pieces out of a real dump, each a file of its own small enough for a
// fuzzer to mutate: the dump's header, then the first sub-records of one of its segments, up to
// size bytes of them, in a segment of their own, and HEAP DUMP END. The pieces come from the
// first segments (class dumps, the JDK's objects) and the last (the roots).
func fixturePieces(t testing.TB, dump []byte, size int64) [][]byte {
	ra := bytes.NewReader(dump)
	first := int64(-1) // the first record: the header ends there
	idx, err := hprof.ReadIndex(ra, int64(len(dump)), func(rec *hprof.Record) error {
		if first < 0 {
			first = rec.Offset
		}
		return nil
	})
	if err != nil || len(idx.Segments) == 0 {
		t.Fatalf("the fixture dump: %v (%d segments)", err, len(idx.Segments))
	}
	var pieces [][]byte
	segs := idx.Segments
	for _, s := range append(segs[:min(3, len(segs))], segs[len(segs)-1]) {
		r := hprof.NewSegmentReader(ra, idx, s, make([]byte, 64<<10))
		end := s.Body
		for {
			rec, err := r.Next()
			if err != nil || r.Offset()-s.Body > size {
				break
			}
			_ = rec
			end = r.Offset()
		}
		if first < 0 || first > s.Offset {
			first = s.Offset
		}
		piece := append([]byte(nil), dump[:first]...)
		piece = append(piece, byte(hprof.TagHeapDumpSegment), 0, 0, 0, 0)
		piece = binary.BigEndian.AppendUint32(piece, uint32(end-s.Body))
		piece = append(piece, dump[s.Body:end]...)
		piece = append(piece, byte(hprof.TagHeapDumpEnd), 0, 0, 0, 0, 0, 0, 0, 0)
		pieces = append(pieces, piece)
	}
	return pieces
}
