package hprof_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
)

// The index and per-segment readers must see exactly the records a sequential Reader sees, with
// the same offsets and dump numbers, whatever buffer size the segment readers get.
func TestIndexAndSegmentReadersMatchSequential(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		data := sample(idSize)
		full, _, err := readAll(t, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, bufSize := range []int{7, 64, 1 << 16} {
			var got []hprof.Record
			keep := func(rec *hprof.Record) {
				c := *rec
				c.Data = append([]byte(nil), rec.Data...)
				got = append(got, c)
			}
			idx, err := hprof.ReadIndex(bytes.NewReader(data), int64(len(data)), func(rec *hprof.Record) error { keep(rec); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if idx.IDSize != idSize || idx.Dumps != 2 || len(idx.Segments) != 3 {
				t.Fatalf("index: id size %d, %d dumps, %d segments", idx.IDSize, idx.Dumps, len(idx.Segments))
			}
			for _, seg := range idx.Segments {
				got = append(got, hprof.Record{Tag: seg.Tag, Offset: seg.Offset, Dump: seg.Dump})
				r := hprof.NewSegmentReader(bytes.NewReader(data), idx, seg, make([]byte, bufSize))
				hproftest.Records(t, r, keep)
			}
			// The index reports top-level records before the segments, so compare as sets by offset.
			byOff := map[int64]hprof.Record{}
			for _, r := range got {
				byOff[r.Offset] = r
			}
			if len(byOff) != len(full) {
				t.Fatalf("buffer %d: %d records, sequential reader %d", bufSize, len(byOff), len(full))
			}
			for _, want := range full {
				g, ok := byOff[want.Offset]
				if !ok || g.Tag != want.Tag || g.Dump != want.Dump || g.ID != want.ID || g.Class != want.Class ||
					g.Length != want.Length || !bytes.Equal(g.Data, want.Data) {
					t.Errorf("buffer %d: at offset %d got %+v, want %+v", bufSize, want.Offset, g, want)
				}
			}
		}
	}
}

// A file cut inside a segment cannot be indexed; the error says it is a truncation.
func TestIndexTruncated(t *testing.T) {
	data := sample(8)
	if _, err := hprof.ReadIndex(bytes.NewReader(data[:len(data)-3]), int64(len(data)-3), nil); err == nil || !hprof.Truncated(err) {
		t.Fatalf("truncated file: %v", err)
	}
}

// Headers must report every record Next reports, in order: the headers of its batches and the
// records it returns together make up the sequential reader's records.
func TestHeadersMatchNext(t *testing.T) {
	type head struct {
		tag       hprof.Tag
		id, class uint64
		length    uint32
		elem      hprof.Type
		offset    int64
	}
	// The sample, and a run of instances and arrays one after the other, which batches take
	// several at a time (each with its own offset).
	run := func(idSize int) []byte {
		b := hproftest.New(idSize)
		b.LoadClass(0x20, "app/Node")
		b.StartSegment(false)
		b.Class(0x20, 0, "", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}}, nil)
		for i := range uint64(10) {
			b.Instance(0x100+16*i, 0x20, 0x100+16*(i+1))
			b.PrimArray(0x1000+64*i, hprof.TypeInt, int(i))
		}
		b.EndSegment()
		return b.Bytes()
	}
	type input struct {
		idSize int
		data   []byte
	}
	for _, in := range []input{{4, sample(4)}, {8, sample(8)}, {4, run(4)}, {8, run(8)}} {
		idSize, data := in.idSize, in.data
		full, _, err := readAll(t, data)
		if err != nil {
			t.Fatal(err)
		}
		var want []head
		for _, rec := range full {
			if rec.Tag == hprof.TagPrimArrayDump {
				rec.Class = 0
			}
			if rec.Tag != hprof.TagPrimArrayDump {
				rec.Length, rec.Elem = 0, 0
			}
			want = append(want, head{rec.Tag, rec.ID, rec.Class, rec.Length, rec.Elem, rec.Offset})
		}
		r, err := hprof.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var got []head
		var gotFields, wantFields []string
		fast := 0
		hs := make([]hprof.Header, 3) // small, so that batches also end on a full array
		fields := make([][]byte, len(hs))
		for {
			n, rec, err := r.Headers(hs, fields)
			for i, h := range hs[:n] {
				got = append(got, head{h.Tag, h.ID, h.Class, h.Length, h.Elem, h.Offset})
				if h.Tag == hprof.TagInstanceDump {
					gotFields = append(gotFields, string(fields[i]))
				}
				fast++
			}
			if n > 0 {
				if rec != nil || err != nil {
					t.Fatalf("id size %d: Headers gave %d headers and a record or error (%v)", idSize, n, err)
				}
				continue
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.Tag == hprof.TagInstanceDump {
				gotFields = append(gotFields, string(rec.Data))
			}
			h := head{rec.Tag, rec.ID, rec.Class, rec.Length, rec.Elem, rec.Offset}
			if rec.Tag == hprof.TagPrimArrayDump {
				h.class = 0
			} else {
				h.length, h.elem = 0, 0
			}
			got = append(got, h)
		}
		if len(got) != len(want) {
			t.Fatalf("id size %d: %d records, Next gives %d", idSize, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("id size %d: record %d is %+v, Next gives %+v", idSize, i, got[i], want[i])
			}
		}
		for _, rec := range full {
			if rec.Tag == hprof.TagInstanceDump {
				wantFields = append(wantFields, string(rec.Data))
			}
		}
		if !slices.Equal(gotFields, wantFields) {
			t.Errorf("id size %d: instance fields %q, Next gives %q", idSize, gotFields, wantFields)
		}
		if idSize == 8 && fast == 0 {
			t.Errorf("no record took the fast path")
		}
	}
}

// Buffered must never hand out bytes past the end of the segment the reader is in, whatever is
// in its buffer beyond, and gives nothing where ids are not 8 bytes (its callers decode 8-byte
// layouts only).
func TestBufferedStaysInSegment(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		data := sample(idSize)
		idx, err := hprof.ReadIndex(bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			t.Fatal(err)
		}
		// A sequential reader's buffer holds what follows the segment too.
		r, err := hprof.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		seg := -1
		for {
			b := r.Buffered()
			if idSize != 8 && b != nil {
				t.Fatalf("id size %d: Buffered gave %d bytes", idSize, len(b))
			}
			if len(b) > 0 {
				for seg+1 < len(idx.Segments) && idx.Segments[seg+1].Body <= r.Offset() {
					seg++
				}
				s := idx.Segments[seg]
				if end := r.Offset() + int64(len(b)); r.Offset() < s.Body || end > s.Body+s.Len {
					t.Fatalf("Buffered at offset %d reaches %d, past its segment [%d, %d)", r.Offset(), end, s.Body, s.Body+s.Len)
				}
				if !bytes.Equal(b, data[r.Offset():r.Offset()+int64(len(b))]) {
					t.Fatalf("Buffered at offset %d is not the file's bytes there", r.Offset())
				}
			}
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		if idSize == 8 && seg < 0 {
			t.Fatal("Buffered never gave segment bytes")
		}
	}
}

// slowReaderAt delays every read, so that the walk in ScanSegments runs behind the workers and
// they wait for segments, as on a file read from disk.
type slowReaderAt struct {
	r     io.ReaderAt
	delay time.Duration
}

func (s slowReaderAt) ReadAt(p []byte, off int64) (int, error) {
	time.Sleep(s.delay)
	return s.r.ReadAt(p, off)
}

// manySegments is a file of two dumps in segments of one or two instances and an array each,
// between top-level records. The arrays are larger than the index's buffer, so that the walk
// reads once per segment.
func manySegments(idSize, segments int) []byte {
	b := hproftest.New(idSize)
	b.LoadClass(0x10, "java/lang/Object")
	b.LoadClass(0x20, "app/Node")
	for i := range segments {
		if i == segments/2 {
			b.EndDump()
			b.LoadClass(0x30, "[Lapp/Node;")
		}
		b.StartSegment(false)
		if i%5 == 0 {
			b.Class(0x20, 0x10, "", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}}, nil)
		}
		for k := range 1 + i%2 {
			b.Instance(uint64(0x1000+16*(2*i+k)), 0x20, 0)
		}
		b.PrimArray(uint64(0x100000+i), hprof.TypeByte, 200<<10)
		b.EndSegment()
		b.Str(fmt.Sprintf("symbol %d", i))
	}
	return b.Bytes()
}

// ScanSegments must hand every segment the index lists to exactly one call, with its position
// and a reader of its records, in file order with one worker, and call Top, Segment and Walked
// as ReadIndexWith would; whether the walk runs ahead of the workers or behind them.
func TestScanSegmentsHandsEverySegmentOnce(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		data := manySegments(idSize, 40)
		want, err := hprof.ReadIndex(bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			t.Fatal(err)
		}
		wantTops := 0
		if _, err := hprof.ReadIndex(bytes.NewReader(data), int64(len(data)), func(*hprof.Record) error { wantTops++; return nil }); err != nil {
			t.Fatal(err)
		}
		wantRecs := map[int]int{} // records by segment
		for i, seg := range want.Segments {
			r := hprof.NewSegmentReader(bytes.NewReader(data), want, seg, make([]byte, 64))
			for {
				if _, err := r.Next(); err != nil {
					break
				}
				wantRecs[i]++
			}
		}
		for k, delay := range []time.Duration{0, 200 * time.Microsecond, 0, 200 * time.Microsecond} {
			walkerWorks := k >= 2 // the walking goroutine the last worker once the walk is done
			for _, workers := range []int{1, 2, 5} {
				var mu sync.Mutex
				var order []int
				gotRecs := map[int]int{}
				var tops, found int
				walked := false
				var readBeforeWalked atomic.Int32 // segments read before the walk was done
				var walkDone atomic.Bool
				ra := slowReaderAt{bytes.NewReader(data), delay}
				idx, err := hprof.ScanSegments(ra, int64(len(data)), hprof.ScanOptions{
					IndexOptions: hprof.IndexOptions{
						Top:     func(*hprof.Record) error { tops++; return nil },
						Segment: func(_ *hprof.Index, seg hprof.Segment) error { found++; return nil },
					},
					Workers:     workers,
					WalkerWorks: walkerWorks,
					Walked: func(idx *hprof.Index) error {
						walked = len(idx.Segments) == len(want.Segments)
						walkDone.Store(true)
						return nil
					},
				}, func(w, i int, seg hprof.Segment, r *hprof.Reader) error {
					if !walkDone.Load() {
						readBeforeWalked.Add(1)
					}
					if w < 0 || w >= workers {
						t.Errorf("worker %d of %d", w, workers)
					}
					if walkerWorks && workers > 1 && w == workers-1 && !walkDone.Load() {
						t.Errorf("the walker read segment %d before its walk was done", i)
					}
					if seg != want.Segments[i] {
						t.Errorf("segment %d: %+v, want %+v", i, seg, want.Segments[i])
					}
					n := 0
					for {
						if _, err := r.Next(); err != nil {
							if err != io.EOF {
								return err
							}
							break
						}
						n++
					}
					mu.Lock()
					defer mu.Unlock()
					order = append(order, i)
					gotRecs[i] += n
					return nil
				})
				if err != nil {
					t.Fatalf("ids %d, %d workers, delay %v: %v", idSize, workers, delay, err)
				}
				if idx.Dumps != 2 || !slices.Equal(idx.Segments, want.Segments) || !walked || found != len(want.Segments) || tops != wantTops {
					t.Errorf("ids %d, %d workers: index %d dumps %d segments, walked %v, Segment called %d times, Top %d", idSize, workers, idx.Dumps, len(idx.Segments), walked, found, tops)
				}
				// With every read slowed down, the walk takes 40 of them: the workers must have
				// started on the segments found by then, not waited for the whole index.
				if delay > 0 && readBeforeWalked.Load() == 0 {
					t.Errorf("ids %d, %d workers: no segment was read before the walk was done", idSize, workers)
				}
				if workers == 1 && !slices.IsSorted(order) {
					t.Errorf("one worker read segments out of order: %v", order)
				}
				if len(order) != len(want.Segments) || !maps.Equal(gotRecs, wantRecs) {
					t.Errorf("ids %d, %d workers, delay %v: segments read %v, records %v, want %v", idSize, workers, delay, order, gotRecs, wantRecs)
				}
			}
		}
	}
}

// The first error stops everything and is returned: a worker's stops the walk, and the walk's
// (a truncated file) stops the workers.
func TestScanSegmentsStopsAtFirstError(t *testing.T) {
	data := manySegments(8, 40)
	boom := errors.New("boom")
	var calls atomic.Int32
	var walkedTo int
	_, err := hprof.ScanSegments(slowReaderAt{bytes.NewReader(data), 200 * time.Microsecond}, int64(len(data)), hprof.ScanOptions{
		IndexOptions: hprof.IndexOptions{Segment: func(idx *hprof.Index, _ hprof.Segment) error {
			walkedTo = len(idx.Segments)
			return nil
		}},
		Workers: 2,
	}, func(_, i int, _ hprof.Segment, _ *hprof.Reader) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if err != boom {
		t.Fatalf("error %v, want the worker's", err)
	}
	if walkedTo == 40 || calls.Load() >= 40 {
		t.Errorf("after the worker's error the walk went on to segment %d and %d segments were read", walkedTo, calls.Load())
	}

	cut := data[:len(data)-20]
	var read atomic.Int32
	_, err = hprof.ScanSegments(bytes.NewReader(cut), int64(len(cut)), hprof.ScanOptions{Workers: 2},
		func(_, _ int, _ hprof.Segment, r *hprof.Reader) error {
			read.Add(1)
			for {
				if _, err := r.Next(); err != nil {
					if err == io.EOF {
						return nil
					}
					return err
				}
			}
		})
	if err == nil || !hprof.Truncated(err) {
		t.Fatalf("truncated file: %v", err)
	}
	if read.Load() > 40 {
		t.Errorf("%d segments read of a file with 40", read.Load())
	}
}

// countingReaderAt counts the reads made through it.
type countingReaderAt struct {
	r     io.ReaderAt
	reads atomic.Int32
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	return c.r.ReadAt(p, off)
}

// The names at the head of a dump are many small records, some of which straddle the end of
// the index's buffer: the walk must read through them a buffer at a time, not seek past each
// straddling one and refill with a short read.
func TestIndexReadsNamesABufferAtATime(t *testing.T) {
	b := hproftest.New(8)
	for i := range 40000 {
		b.Str(fmt.Sprintf("name %d %s", i, strings.Repeat("x", i%97)))
	}
	b.StartSegment(false)
	b.PrimArray(0x1000, hprof.TypeByte, 64)
	b.EndSegment()
	data := b.Bytes()
	ra := &countingReaderAt{r: bytes.NewReader(data)}
	idx, err := hprof.ReadIndexWith(ra, int64(len(data)), hprof.IndexOptions{SkipUTF8: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Segments) != 1 || len(idx.UTF8) == 0 || idx.UTF8[len(idx.UTF8)-1].End != idx.Segments[0].Offset {
		t.Fatalf("index: %d segments, names %v", len(idx.Segments), idx.UTF8)
	}
	// A buffer of 128 KB: the file's bytes in that many reads, and a few more for the header
	// and the segment.
	if want := int32(len(data)/(128<<10)) + 4; ra.reads.Load() > want {
		t.Errorf("%d reads for %d bytes of names, want at most %d", ra.reads.Load(), len(data), want)
	}
}
