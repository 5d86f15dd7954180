package hprof

import (
	"fmt"
	"io"
	"os"
	"sync"
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
	// again once it knows which (Schema.TakeNames).
	SkipUTF8 bool
	// Segment, if set, is called for every heap-dump segment as soon as its header is read, with
	// the index read so far (its header fields set), before the walk goes on to the next record.
	// An error it returns ends the walk and is returned.
	Segment func(*Index, Segment) error
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

// IsGzip reports whether ra starts with gzip's magic number: a gzip-compressed dump.
func IsGzip(ra io.ReaderAt) bool {
	var magic [2]byte
	_, err := ra.ReadAt(magic[:], 0)
	return err == nil && isGzipMagic(magic[:])
}

func isGzipMagic(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// ReadIndexWith is ReadIndex with options.
func ReadIndexWith(ra io.ReaderAt, size int64, opt IndexOptions) (*Index, error) {
	top := opt.Top
	sr := io.NewSectionReader(ra, 0, size)
	if size >= 2 && IsGzip(ra) {
		return nil, &FormatError{Offset: 0, Record: "file header", Msg: "gzip-compressed: no index without decompressing"}
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
		seg := Segment{Tag: rec.Tag, Offset: rec.Offset, Body: r.in.off, Len: r.segEnd - r.in.off, Dump: rec.Dump}
		idx.Segments = append(idx.Segments, seg)
		if opt.Segment != nil {
			if err := opt.Segment(idx, seg); err != nil {
				return nil, err
			}
		}
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
		if len(b) < headerLen {
			var err error
			if b, err = r.in.peek(headerLen); err != nil {
				return nil
			}
		}
		if Tag(b[0]) != TagUTF8 {
			return nil
		}
		off := r.in.off
		n := recordLen(b)
		end := off + n
		if n < int64(utf8Chars.At(r.IDSize)) || end > size {
			return nil
		}
		if k := len(idx.UTF8); k > 0 && idx.UTF8[k-1].End == off {
			idx.UTF8[k-1].End = end
		} else {
			idx.UTF8 = append(idx.UTF8, Span{Offset: off, End: end})
		}
		if int64(len(b)) >= n {
			r.in.consume(int(n))
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

// skipTo moves the input to stream offset target. A skip past the buffered bytes of more than
// readThrough seeks the underlying reader, so that the skipped data is never read; a shorter one
// reads on through it, as does any skip on a reader that cannot seek.
func (in *input) skipTo(target int64) error {
	if buffered := int64(in.end - in.start); target-in.off <= buffered {
		in.consume(int(target - in.off))
		return nil
	}
	sk, ok := in.r.(io.Seeker)
	if !ok || target-in.off <= readThrough {
		return in.discard(target - in.off)
	}
	if _, err := sk.Seek(target, io.SeekStart); err != nil {
		return err
	}
	in.start, in.end, in.off, in.eof = 0, 0, target, nil
	// What follows a skipped body is mostly the next body's header: a buffer's worth of reading
	// would be copying the body that is skipped next, once for every body skipped.
	in.short = afterSkipRead
	return nil
}

// afterSkipRead is how much the first read after skipTo asks for: a segment's header and a
// few small records.
const afterSkipRead = 512

// readThrough is the longest skip that skipTo reads through rather than seeks over. Small
// records that straddle the buffer's end (the names at the head of a dump, UTF8 records)
// otherwise each made the next read a short one, a system call per half kilobyte: short reads
// then outnumbered those of the buffer's size.
const readThrough = 4096

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
	q := &segmentQueue{done: true}
	q.cond.L = &q.mu
	for _, s := range segs {
		q.push(s)
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.work(workers, func(i int, seg Segment, buf []byte) error {
				return fn(w, i, NewSegmentReader(f, idx, seg, buf))
			})
		}()
	}
	wg.Wait()
	return q.err
}

// ScanOptions say what ScanSegments reads and how.
type ScanOptions struct {
	IndexOptions     // for the walk; Top and Segment are called on the goroutine that called ScanSegments
	Workers      int // goroutines reading segments, at least one
	// Walked, if set, is called on the walking goroutine once the whole index is read, while the
	// workers may still be reading segments.
	Walked func(*Index) error
	// WalkerWorks has the walking goroutine be the last of the Workers, from when the walk (and
	// Walked) is done, rather than a goroutine of its own: the walk then never waits for a core
	// that every worker holds while the workers wait for the segments it has yet to find. (With
	// two workers beside it on two cores, a class histogram's walk took several times as long
	// whenever the scheduler had the workers hold both cores, and the workers idled meanwhile.)
	WalkerWorks bool
}

// ScanSegments reads the index of an uncompressed file of size bytes, as ReadIndexWith does, and
// hands every heap-dump segment to fn on one of opt.Workers goroutines as soon as the walk has
// found it, so that reading segments overlaps the walk. The walk hops from one segment header to
// the next, a megabyte apart: in a file in the page cache that costs little, but in a file read
// from disk every hop waits for the disk, the hops together about as long as reading the whole
// file; with both at once the segments are read while the walk goes on.
//
// fn gets the worker's number, the segment's position among the file's segments, the segment and
// a Reader over it; it may return nil at once for a segment it does not want (of another dump).
// Workers claim runs of consecutive segments as EachSegment does, the remaining work reckoned from
// the file's size until the walk is done; one worker reads them all in file order. The first
// error, of the walk or of fn, stops the rest and is returned, with no index.
func ScanSegments(ra io.ReaderAt, size int64, opt ScanOptions, fn func(worker, i int, seg Segment, r *Reader) error) (*Index, error) {
	workers := max(1, opt.Workers)
	q := &segmentQueue{size: size}
	q.cond.L = &q.mu
	var wg sync.WaitGroup
	started := false
	var hdr *Index // the readers need only the header's fields, which the walk never changes
	work := func(w int) {
		q.work(workers, func(i int, seg Segment, buf []byte) error {
			return fn(w, i, seg, NewSegmentReader(ra, hdr, seg, buf))
		})
	}
	walkerWorks := opt.WalkerWorks && workers > 1
	start := func(idx *Index) {
		started = true
		hdr = &Index{Format: idx.Format, IDSize: idx.IDSize}
		for w := range workers {
			if walkerWorks && w == workers-1 {
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				work(w)
			}()
		}
	}
	walk := opt.IndexOptions
	walk.Segment = func(idx *Index, seg Segment) error {
		if !started {
			start(idx)
		}
		if opt.Segment != nil {
			if err := opt.Segment(idx, seg); err != nil {
				return err
			}
		}
		return q.add(seg)
	}
	idx, err := ReadIndexWith(ra, size, walk)
	if err == nil && opt.Walked != nil {
		err = opt.Walked(idx)
	}
	q.finish(err)
	if walkerWorks && started {
		work(workers - 1)
	}
	wg.Wait()
	if q.err != nil {
		return nil, q.err
	}
	return idx, nil
}

// segmentQueue holds the segments the walk has found for the workers that read them.
type segmentQueue struct {
	mu     sync.Mutex
	cond   sync.Cond
	segs   []Segment
	before []int64 // bytes in the segments before segs[i]
	next   int     // the first segment not yet claimed
	size   int64   // the file's size, for the work left until the walk is done
	done   bool
	err    error
}

func (q *segmentQueue) add(seg Segment) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	q.push(seg)
	q.cond.Signal()
	return nil
}

func (q *segmentQueue) push(seg Segment) {
	if len(q.before) == 0 {
		q.before = append(q.before, 0)
	}
	q.segs = append(q.segs, seg)
	q.before = append(q.before, q.before[len(q.before)-1]+seg.Len)
}

// finish says the walk is over, with the error that ended it or nil.
func (q *segmentQueue) finish(err error) { q.stop(err, true) }

// fail stops the work with a worker's error.
func (q *segmentQueue) fail(err error) { q.stop(err, false) }

func (q *segmentQueue) stop(err error, walked bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.done = q.done || walked
	if q.err == nil {
		q.err = err
	}
	q.cond.Broadcast()
}

// claim waits for a run of segments for a worker and returns it as [i, j), or j == i when there
// is no more work. Runs shrink as the work left does (see EachSegment), reckoned from the file's
// size until the walk is done.
func (q *segmentQueue) claim(workers int) (i, j int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.next == len(q.segs) && !q.done && q.err == nil {
		q.cond.Wait()
	}
	i = q.next
	if q.err != nil || i == len(q.segs) {
		return i, i
	}
	total := q.size
	if q.done {
		total = q.before[len(q.segs)]
	}
	batch := min(batchBytes, (total-q.before[i])/int64(2*workers))
	j = i + 1
	for j < len(q.segs) && q.before[j+1]-q.before[i] <= batch {
		j++
	}
	q.next = j
	return i, j
}

// work has one worker read runs of segments until there are none left or something failed.
func (q *segmentQueue) work(workers int, read func(i int, seg Segment, buf []byte) error) {
	var buf []byte
	for {
		i, j := q.claim(workers)
		if i == j {
			return
		}
		if buf == nil {
			buf = make([]byte, SegmentBuf)
		}
		for k := i; k < j; k++ {
			q.mu.Lock()
			seg, err := q.segs[k], q.err
			q.mu.Unlock()
			if err == nil {
				err = read(k, seg, buf)
			}
			if err != nil {
				q.fail(err)
				return
			}
		}
	}
}

// SegmentBuf is a worker's read buffer: small enough to stay in the core's cache (half of its
// 512 KB L2 on the machines here) while its records are parsed, large enough that reads are
// few: a class histogram took more CPU with a smaller buffer, and with a larger one.
const SegmentBuf = 256 << 10

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
