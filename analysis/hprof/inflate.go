package hprof

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// inflateAhead hands a reader the bytes of a gzip stream that goroutines of their own inflate a
// few blocks ahead of it, so that inflating and parsing run on two cores at once rather than in
// turns on one, where inflating costs about as much again as parsing. The blocks cycle
// between the inflater and the reader, so the memory held stays at a few blocks.
type inflateAhead struct {
	full <-chan []byte // inflated blocks, in order; closed after the last
	free chan<- []byte // blocks the reader is done with
	cur  []byte        // the unread rest of the block being read
	err  *error        // the inflater's error, set before full is closed
	held []byte        // the block cur lies in, given back when it is read
}

const (
	inflateBlock  = 1 << 20
	inflateBlocks = 4
)

// blocks is what an inflater and its reader share.
type blocks struct {
	full chan []byte
	free chan []byte
	done chan struct{} // closed when the reader is gone
	err  error         // the inflater's, set before full is closed
}

func newBlocks(n, size int) *blocks {
	b := &blocks{full: make(chan []byte, n), free: make(chan []byte, n), done: make(chan struct{})}
	for range n {
		b.free <- make([]byte, size)
	}
	return b
}

// reader returns the reading end. A reader dropped before the end (a pass that stops early, an
// error) lets the inflater go once it is garbage: the inflater would otherwise wait for a free
// block forever.
func (b *blocks) reader() io.Reader {
	a := &inflateAhead{full: b.full, free: b.free, err: &b.err}
	runtime.AddCleanup(a, func(done chan struct{}) { close(done) }, b.done)
	return a
}

// take waits for a free block; false when the reader is gone.
func (b *blocks) take() ([]byte, bool) {
	select {
	case x := <-b.free:
		return x[:cap(x)], true
	case <-b.done:
		return nil, false
	}
}

// pump inflates src into blocks until its end or an error, which it returns (nil at the end, or
// when the reader is gone). src's own errors (a stream cut short gives io.ErrUnexpectedEOF) pass
// through as they are.
func (b *blocks) pump(src io.Reader) error {
	for {
		x, ok := b.take()
		if !ok {
			return nil
		}
		n, err := 0, error(nil)
		for n < len(x) && err == nil {
			var k int
			k, err = src.Read(x[n:])
			n += k
		}
		if n > 0 {
			b.full <- x[:n] // never blocks: there are no more blocks than room
		} else {
			b.free <- x
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// finish ends the stream for the reader, with err (nil for a clean end).
func (b *blocks) finish(err error) {
	if err == nil {
		err = io.EOF
	}
	b.err = err
	close(b.full)
}

// newInflateAhead starts inflating src. With a single core there is nothing to overlap, and src
// is returned as it is.
func newInflateAhead(src io.Reader) io.Reader {
	if runtime.GOMAXPROCS(0) < 2 {
		return src
	}
	b := newBlocks(inflateBlocks, inflateBlock)
	go func() { b.finish(b.pump(src)) }()
	return b.reader()
}

func (a *inflateAhead) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		if a.held != nil {
			a.free <- a.held[:cap(a.held)]
			a.held = nil
		}
		b, ok := <-a.full
		if !ok {
			return 0, *a.err // written before full was closed
		}
		a.cur, a.held = b, b
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// hotspotBlockComment starts the comment of the first gzip member of a dump that HotSpot wrote
// compressed (jcmd GC.heap_dump -gz=N): it compresses the dump in blocks of the size that follows,
// each a gzip member of its own, which can be inflated independently of the others.
const hotspotBlockComment = "HPROF BLOCKSIZE="

// memberInflater settings: how many members are inflated at once, how far past a member's start
// the next member's header is looked for (a member of a megabyte compresses to less; where none
// is found, members are inflated one at a time), and the largest block size inflated by members
// (HotSpot's is a megabyte; the blocks in flight take seven times the block size).
const (
	membersAtOnce  = 3
	memberScan     = 4 << 20
	maxMemberBlock = 8 << 20
)

// newMemberInflater inflates a gzip file of many small members, as HotSpot writes, on every core:
// the members are inflated side by side into blocks that the reader gets in order. A member's end
// is known only once it is inflated, so the members after it start where the next gzip header
// seems to be; each guess is checked against where the member before it really ended (and by the
// gzip checksum of the member), and a wrong guess is dropped and inflated again from the right
// place. A member that is not a guess and is damaged ends the reading with an error that says
// where; one cut short, or larger than its block, has the rest of the file inflated as one stream
// from it, which gives the reader the data and the error that a plain gzip reader would. ra holds
// the gzip file from its first byte to size.
func newMemberInflater(ra io.ReaderAt, size int64, block int) io.Reader {
	b := newBlocks(2*membersAtOnce+1, block)
	go func() { b.finish(inflateMembers(ra, size, b)) }()
	return b.reader()
}

// member is one member inflated, or a guess at one.
type member struct {
	at   int64 // offset of its gzip header
	data []byte
	end  int64 // offset after its trailer
	err  error
	done chan struct{}
}

func inflateMembers(ra io.ReaderAt, size int64, b *blocks) error {
	var pending []*member // pending[0] starts at start; the rest are guesses, in file order
	start := int64(0)
	scan := make([]byte, 64<<10)
	for start < size {
		for len(pending) < membersAtOnce {
			at := start
			if len(pending) > 0 {
				if at = nextMemberHeader(ra, size, pending[len(pending)-1].at+1, scan); at < 0 {
					break
				}
			}
			x, ok := b.take()
			if !ok {
				return nil
			}
			m := &member{at: at, data: x, done: make(chan struct{})}
			go func() { defer close(m.done); m.inflate(ra, size) }()
			pending = append(pending, m)
		}
		m := pending[0]
		<-m.done
		pending = pending[1:]
		if m.err != nil {
			drop(pending, b)
			b.free <- m.data
			if damaged(m.err) {
				// Not a guess, and whole but wrong: none of its bytes are worth parsing, where
				// one stream would hand them on before its checksum fails, and the reader would
				// report what it made of them.
				return &memberDamage{at: m.at, err: m.err}
			}
			// Cut short, larger than its block, or no member at all: from here the file is read
			// as one stream, which gives what a plain reader would (the part before a cut, for a
			// partial analysis).
			return b.pump(newGzipStream(ra, m.at, size))
		}
		if len(m.data) > 0 {
			b.full <- m.data
		} else {
			b.free <- m.data
		}
		start = m.end
		if len(pending) > 0 && pending[0].at != start {
			drop(pending, b)
			pending = nil
		}
	}
	return nil
}

// drop waits for guesses that turned out wrong and takes their blocks back.
func drop(ms []*member, b *blocks) {
	for _, m := range ms {
		<-m.done
		b.free <- m.data[:0]
	}
}

// inflate inflates the one member at m.at into m.data, setting m.end, or m.err when there is no
// whole, intact member there that fits the block.
func (m *member) inflate(ra io.ReaderAt, size int64) {
	// The readers are reused: made afresh for each of the hundreds of members of a dump, their
	// buffers and tables were the most of a histogram's memory.
	st := memberReaders.Get().(*memberReader)
	defer memberReaders.Put(st)
	cr, br := &st.cr, st.br
	*cr = countingReader{r: io.NewSectionReader(ra, m.at, size-m.at)}
	br.Reset(cr) // a ByteReader: the inflater reads no further than the member
	var err error
	if st.zr == nil {
		st.zr, err = gzip.NewReader(br)
	} else {
		err = st.zr.Reset(br)
	}
	if err != nil {
		m.err, m.data = err, m.data[:0]
		return
	}
	zr := st.zr
	zr.Multistream(false)
	n := 0
	for n < len(m.data) && err == nil {
		var k int
		k, err = zr.Read(m.data[n:])
		n += k
	}
	m.data = m.data[:n]
	if err == nil {
		// The block is full: the member must end exactly here.
		var one [1]byte
		if k, e := zr.Read(one[:]); k > 0 {
			// Damage, most likely, that makes the data inflate to more: read on a little to
			// see whether its checksum fails, which says so. A member that turns out whole is
			// only larger than its block, and is read as part of a stream.
			err = errMemberTooLarge
			if _, e := io.CopyN(io.Discard, zr, memberOverrun); e != nil && e != io.EOF && damaged(e) {
				err = e
			}
		} else {
			err = e
		}
	}
	if err != io.EOF {
		m.err = err
		return
	}
	m.end = m.at + cr.n - int64(br.Buffered())
}

type memberReader struct {
	cr countingReader
	br *bufio.Reader
	zr *gzip.Reader
}

var memberReaders = sync.Pool{New: func() any { return &memberReader{br: bufio.NewReaderSize(nil, 64<<10)} }}

// memberDamage is a damaged member of a file of members, found before any of its bytes were
// handed on: what was read before it is sound.
type memberDamage struct {
	at  int64 // in the compressed file
	err error
}

func (e *memberDamage) Error() string {
	return fmt.Sprintf("gzip member at offset %d of the compressed file is damaged: %v", e.at, e.err)
}

func (e *memberDamage) Unwrap() error { return e.err }

// damaged reports whether err says a member's data is wrong, rather than cut short or too large.
func damaged(err error) bool {
	var corrupt flate.CorruptInputError
	return errors.Is(err, gzip.ErrChecksum) || errors.As(err, &corrupt)
}

// memberOverrun is how far past its block a member is inflated to tell damage from size.
const memberOverrun = 4 << 20

// errMemberTooLarge marks a member that inflates past its block; it never reaches the reader,
// which gets the stream read on from the member instead.
var errMemberTooLarge = errors.New("gzip member inflates past its block")

// nextMemberHeader returns the offset of the first place from from on (within memberScan) that
// starts like a gzip member header, or -1.
func nextMemberHeader(ra io.ReaderAt, size, from int64, buf []byte) int64 {
	for at := from; at < size && at < from+memberScan; {
		n, err := ra.ReadAt(buf[:min(int64(len(buf)), size-at)], at)
		if n < 4 {
			return -1
		}
		chunk := buf[:n]
		for i := 0; ; {
			k := bytes.Index(chunk[i:], []byte{0x1f, 0x8b, 0x08})
			if k < 0 || i+k+3 >= len(chunk) {
				break
			}
			if chunk[i+k+3]&0xe0 == 0 { // reserved flag bits clear
				return at + int64(i+k)
			}
			i += k + 1
		}
		if err != nil {
			return -1
		}
		at += int64(n - 3) // a header may straddle two reads
	}
	return -1
}

// newGzipStream inflates the members of ra from offset at to size as one stream.
func newGzipStream(ra io.ReaderAt, at, size int64) io.Reader {
	zr, err := gzip.NewReader(bufio.NewReaderSize(io.NewSectionReader(ra, at, size-at), 64<<10))
	if err != nil {
		return errReader{err}
	}
	return zr
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// gzipSource returns what inflates the gzip stream zr has begun on: the members of a file that
// HotSpot compressed in blocks inflated side by side, when r is that file read from its start;
// otherwise the one stream, inflated ahead of the reader.
func gzipSource(r io.Reader, zr *gzip.Reader) io.Reader {
	block, err := strconv.Atoi(strings.TrimPrefix(zr.Comment, hotspotBlockComment))
	if !strings.HasPrefix(zr.Comment, hotspotBlockComment) || err != nil || block < 1<<10 || block > maxMemberBlock || runtime.GOMAXPROCS(0) < 2 {
		return newInflateAhead(zr)
	}
	f, ok := r.(*os.File)
	if !ok {
		return newInflateAhead(zr)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return newInflateAhead(zr)
	}
	return newMemberInflater(f, st.Size(), block)
}
