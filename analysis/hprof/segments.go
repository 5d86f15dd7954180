package hprof

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// Segment locates the body of one HEAP DUMP or HEAP DUMP SEGMENT record in an uncompressed file.
// HotSpot writes a dump as many segments of about a megabyte each, so segments are the unit that
// readers hand to parallel workers: every one starts at a sub-record boundary.
type Segment struct {
	Tag    Tag   // TagHeapDump or TagHeapDumpSegment
	Offset int64 // offset of the record's tag byte
	Body   int64 // offset of its first sub-record
	Len    int64 // body length in bytes
	Dump   int   // 1-based number of the heap dump it belongs to
}

// Index is the top-level structure of an uncompressed HPROF file: its header and where the
// heap-dump bodies are.
type Index struct {
	Format   string
	IDSize   int
	Segments []Segment
	Dumps    int // heap dumps in the file
	// UTF8 lists where the file's UTF8 (symbol) records lie, as runs of consecutive records,
	// when the index was read with SkipUTF8.
	UTF8 []Span
}

// Span is a range of a file: the bytes from Offset up to End.
type Span struct{ Offset, End int64 }

// IndexOptions say what ReadIndexWith reports besides the segments.
type IndexOptions struct {
	// Top, if set, is called for every top-level record other than heap-dump segments (and UTF8
	// records, with SkipUTF8), decoded as Reader.Next decodes it; the record is valid only
	// during the call.
	Top func(*Record) error
	// SkipUTF8 steps over UTF8 records without decoding them, noting only where they lie
	// (Index.UTF8): a dump's tens of thousands of symbols are most of the records before its
	// heap, and a reader that wants a few of them (a histogram's class names) reads those
	// again once it knows which (Schema.TakeClassNames).
	SkipUTF8 bool
}

// indexBufSize is the index reader's buffer, for the runs of small records before the heap
// (symbols, classes); past a skipped body it reads only afterSkipRead.
const indexBufSize = 128 << 10

// ReadIndex walks the top-level records of an uncompressed HPROF file of size bytes through ra,
// seeking over heap-dump bodies without reading them, and calls top (if not nil) for every other
// record, decoded as Reader.Next decodes it (the record is valid only during the call). A
// gzip-compressed file has no random access and gives an error; use NewReader for it.
func ReadIndex(ra io.ReaderAt, size int64, top func(*Record) error) (*Index, error) {
	return ReadIndexWith(ra, size, IndexOptions{Top: top})
}

// ReadIndexWith is ReadIndex with options.
func ReadIndexWith(ra io.ReaderAt, size int64, opt IndexOptions) (*Index, error) {
	top := opt.Top
	sr := io.NewSectionReader(ra, 0, size)
	if magic := make([]byte, 2); size >= 2 {
		if _, err := ra.ReadAt(magic, 0); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
			return nil, &FormatError{Offset: 0, Record: "file header", Msg: "gzip-compressed: no index without decompressing"}
		}
	}
	r, err := readHeader(&Reader{in: input{r: sr, buf: make([]byte, indexBufSize)}, segEnd: -1})
	if err != nil {
		return nil, err
	}
	idx := &Index{Format: r.Format, IDSize: r.IDSize}
	for {
		if opt.SkipUTF8 {
			if err := r.skipUTF8(idx, size); err != nil {
				return nil, err
			}
		}
		rec, err := r.top()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if rec.Tag != TagHeapDump && rec.Tag != TagHeapDumpSegment {
			if top != nil {
				if err := top(rec); err != nil {
					return nil, err
				}
			}
			continue
		}
		if r.segEnd > size {
			return nil, &FormatError{Offset: rec.Offset, Record: r.segName(), truncated: true,
				Msg: fmt.Sprintf("body of %d bytes is cut short (input ends at offset %d)", r.segEnd-r.in.off, size)}
		}
		idx.Segments = append(idx.Segments, Segment{Tag: rec.Tag, Offset: rec.Offset, Body: r.in.off, Len: r.segEnd - r.in.off, Dump: rec.Dump})
		if err := r.in.skipTo(r.segEnd); err != nil {
			return nil, r.errAt(r.in.off, r.segName(), "cannot skip the body", err)
		}
		if r.segTag == TagHeapDump {
			r.open = false
		}
		r.segEnd = -1
	}
	idx.Dumps = r.dumps
	return idx, nil
}

// skipUTF8 steps over the UTF8 records at the reader's position, adding them to idx.UTF8. It
// stops at anything else, and at a record that is cut short or too short for its id, which
// top then reports.
func (r *Reader) skipUTF8(idx *Index, size int64) error {
	for {
		b := r.in.buf[r.in.start:r.in.end]
		if len(b) < 9 {
			var err error
			if b, err = r.in.peek(9); err != nil {
				return nil
			}
		}
		if Tag(b[0]) != TagUTF8 {
			return nil
		}
		off := r.in.off
		n := int64(binary.BigEndian.Uint32(b[5:9]))
		end := off + 9 + n
		if n < int64(r.IDSize) || end > size {
			return nil
		}
		if k := len(idx.UTF8); k > 0 && idx.UTF8[k-1].End == off {
			idx.UTF8[k-1].End = end
		} else {
			idx.UTF8 = append(idx.UTF8, Span{Offset: off, End: end})
		}
		if int64(len(b)) >= 9+n {
			r.in.consume(int(9 + n))
		} else if err := r.in.skipTo(end); err != nil {
			return r.errAt(off, "UTF8", "cannot skip the record", err)
		}
	}
}

// NewSegmentReader returns a Reader over the sub-records of one segment of an indexed file,
// reading through ra with buf as its whole buffer (it grows only for a record larger than buf).
// Readers of different segments share nothing, so they may run in parallel. Next returns io.EOF
// at the end of the segment; records and errors carry file offsets as with NewReader.
func NewSegmentReader(ra io.ReaderAt, idx *Index, seg Segment, buf []byte) *Reader {
	return &Reader{
		Format: idx.Format, IDSize: idx.IDSize,
		in:     input{r: io.NewSectionReader(ra, seg.Body, seg.Len), buf: buf[:cap(buf)], off: seg.Body, big: cap(buf)},
		segEnd: seg.Body + seg.Len, segOff: seg.Offset, segTag: seg.Tag, open: true, dumps: seg.Dump,
	}
}

// skipTo moves the input to stream offset target, seeking the underlying reader when the bytes
// are not buffered, so that skipped data is never read.
func (in *input) skipTo(target int64) error {
	if buffered := int64(in.end - in.start); target-in.off <= buffered {
		in.consume(int(target - in.off))
		return nil
	}
	sk, ok := in.r.(io.Seeker)
	if !ok {
		return in.discard(target - in.off)
	}
	if _, err := sk.Seek(target, io.SeekStart); err != nil {
		return err
	}
	in.start, in.end, in.off, in.eof = 0, 0, target, nil
	// What follows a skipped body is mostly the next body's header: a buffer's worth of reading
	// would be copying the body that is skipped next (2,000 times 128 KB on a 2 GB dump).
	in.short = afterSkipRead
	return nil
}

// afterSkipRead is how much the first read after skipTo asks for: a segment's header and a
// few small records.
const afterSkipRead = 512

// batchBytes is how much of the file one worker takes at a time: segments are about a megabyte,
// and workers reading long runs of them keep the file's readahead sequential.
const batchBytes = 32 << 20

// EachSegment calls fn for every segment of segs from up to workers goroutines, with a Reader
// over it, the index of the segment in segs and the number of the worker calling (below
// workers). Workers take runs of consecutive segments and call fn for them in order, reading
// through f into a buffer of their own that stays in the core's cache. (Mapping the file instead
// saved no time here — page faults cost what the copy does — and its pages count as resident.)
// The first error fn returns stops the other workers and is returned.
func EachSegment(f *os.File, idx *Index, segs []Segment, workers int, fn func(worker, i int, r *Reader) error) error {
	workers = max(1, min(workers, len(segs)))
	// Runs shrink as the work left does (guided self-scheduling): each claims at most
	// 1/(2·workers) of what is left, down to one segment, so that the workers finish within
	// about a segment of each other. On a file of a few dozen megabytes, runs of batchBytes
	// would leave one worker reading alone while the other is done.
	before := make([]int64, len(segs)+1) // bytes in the segments before segs[i]
	for i, s := range segs {
		before[i+1] = before[i] + s.Len
	}
	total := before[len(segs)]
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	failed := func() bool { mu.Lock(); defer mu.Unlock(); return first != nil }
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for !failed() {
				// Claim a run of segments (see above).
				i := int(next.Load())
				if i >= len(segs) {
					return
				}
				batch := min(batchBytes, (total-before[i])/int64(2*workers))
				j := i + 1
				for j < len(segs) && before[j+1]-before[i] <= batch {
					j++
				}
				if !next.CompareAndSwap(int64(i), int64(j)) {
					continue
				}
				if buf == nil {
					buf = make([]byte, segmentBuf)
				}
				var err error
				for k := i; k < j && err == nil; k++ {
					err = fn(w, k, NewSegmentReader(f, idx, segs[k], buf))
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// segmentBuf is a worker's read buffer: small enough to stay in the core's cache (half of its
// 512 KB L2 on the machines here) while its records are parsed, large enough that reads are
// few. A class histogram of a 2 GB dump took about 5% more CPU with 128 KB, and more with 1 MB.
const segmentBuf = 256 << 10

// Buffered returns the unread bytes of the current heap-dump segment that are in the reader's
// buffer (nil outside a segment, or when ids are not 8 bytes), for a caller that decodes the
// most common sub-records itself; Consume moves past the bytes it took. Everything else, refills
// and errors included, stays Next's.
func (r *Reader) Buffered() []byte {
	if r.IDSize != 8 || r.segEnd < 0 {
		return nil
	}
	b := r.in.buf[r.in.start:r.in.end]
	if left := r.segEnd - r.in.off; int64(len(b)) > left {
		b = b[:left]
	}
	return b
}

// Consume moves past n bytes of what Buffered returned.
func (r *Reader) Consume(n int) { r.in.consume(n) }
