package hprof

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// bufSize is the reader's initial buffer; big enough that nearly every sub-record is parsed
// straight out of it, and reads from the page cache come in large blocks.
const bufSize = 4 << 20

// Reader iterates over the records of an HPROF stream.
type Reader struct {
	Format    string // e.g. "JAVA PROFILE 1.0.2"
	IDSize    int    // 4 or 8
	Timestamp time.Time
	Gzip      bool // the input was gzip-compressed

	// SkipPrimitiveData makes Next leave Record.Data nil for primitive arrays, which saves copying
	// most of a typical dump when only counts and sizes are wanted.
	SkipPrimitiveData bool

	in      input
	segEnd  int64 // end offset of the HEAP DUMP (SEGMENT) body being read; -1 outside one
	segOff  int64
	segTag  Tag
	open    bool // a segmented dump has started and not yet seen HEAP DUMP END
	dumps   int
	rec     Record
	recName string
}

// NewReader reads the file header from r and returns a Reader positioned at the first record.
// A gzip-compressed stream is detected by its magic number and decompressed transparently.
func NewReader(r io.Reader) (*Reader, error) {
	// A file read from its start may be inflated by members, which needs their offsets.
	if f, ok := r.(*os.File); ok {
		if pos, err := f.Seek(0, io.SeekCurrent); err != nil || pos != 0 {
			r = struct{ io.Reader }{f}
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &FormatError{Offset: 0, Msg: "bad gzip header: " + err.Error()}
		}
		rd, err := newReader(gzipSource(r, zr))
		if rd != nil {
			rd.Gzip = true
		}
		return rd, err
	}
	return newReader(br)
}

func newReader(r io.Reader) (*Reader, error) {
	return readHeader(&Reader{in: input{r: r, buf: make([]byte, 64<<10), big: bufSize}, segEnd: -1})
}

// readHeader reads the file header through rd.in and fills in rd's header fields.
func readHeader(rd *Reader) (*Reader, error) {
	// The header is a NUL-terminated format string; no real one is longer than a few dozen bytes.
	var name []byte
	for {
		b, err := rd.in.peek(len(name) + 1)
		if err != nil {
			return nil, rd.errAt(rd.in.off, "file header", "missing or truncated header (not an HPROF file?)", err)
		}
		c := b[len(name)]
		if c == 0 {
			break
		}
		name = b[:len(name)+1]
		if len(name) > 64 || c < 0x20 || c > 0x7e {
			return nil, &FormatError{Offset: 0, Record: "file header", Msg: "not an HPROF file (no format string such as \"JAVA PROFILE 1.0.2\")"}
		}
	}
	rd.Format = string(name)
	rd.in.consume(len(name) + 1)
	b, err := rd.in.peek(12)
	if err != nil {
		return nil, rd.errAt(rd.in.off, "file header", "truncated after format string", err)
	}
	rd.IDSize = int(binary.BigEndian.Uint32(b))
	if rd.IDSize != 4 && rd.IDSize != 8 {
		return nil, &FormatError{Offset: rd.in.off, Record: "file header", Msg: fmt.Sprintf("identifier size %d (want 4 or 8)", rd.IDSize)}
	}
	rd.Timestamp = time.UnixMilli(int64(binary.BigEndian.Uint64(b[4:])))
	rd.in.consume(12)
	return rd, nil
}

// Offset returns the number of (uncompressed) bytes consumed so far.
func (r *Reader) Offset() int64 { return r.in.off }

// Segment returns the file offset of the HEAP DUMP or HEAP DUMP SEGMENT record the last
// sub-record came from: it changes where a new segment starts.
func (r *Reader) Segment() int64 { return r.segOff }

// Dumps returns how many heap dumps have started so far; after io.EOF, the number in the file.
func (r *Reader) Dumps() int { return r.dumps }

// Next returns the next record. At the end of the input it returns io.EOF; a record cut short
// returns a *FormatError for which Truncated is true.
func (r *Reader) Next() (*Record, error) {
	rec, err := r.next()
	if err != nil && r.Gzip {
		inflated(err)
	}
	return rec, err
}

// inflated marks a FormatError of a gzip-compressed input: its offsets count inflated bytes,
// which a reader of the message would otherwise take for offsets in the file.
func inflated(err error) {
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.Inflated = true
	}
}

func (r *Reader) next() (*Record, error) {
	for {
		if r.segEnd >= 0 {
			if r.in.off < r.segEnd {
				return r.sub()
			}
			if r.in.off > r.segEnd {
				return nil, &FormatError{Offset: r.in.off, Record: r.segName(), Msg: fmt.Sprintf("sub-record runs past the end of its segment at %d", r.segEnd)}
			}
			r.segEnd = -1
			if r.segTag == TagHeapDump {
				r.open = false
			}
		}
		return r.top()
	}
}

// SkipSegment discards the rest of the HEAP DUMP or HEAP DUMP SEGMENT being read, so that a
// caller that has what it wants from one dump can count the dumps after it cheaply.
func (r *Reader) SkipSegment() error {
	if r.segEnd < 0 || r.in.off >= r.segEnd {
		return nil
	}
	off := r.in.off
	if err := r.in.discard(r.segEnd - off); err != nil {
		err = r.errAt(off, r.segName(), "truncated", err)
		if r.Gzip {
			inflated(err)
		}
		return err
	}
	return nil
}

// InSegment reports whether the reader is inside a HEAP DUMP or HEAP DUMP SEGMENT body, whose
// rest SkipSegment can step over: after a sub-record that does not parse, say, in a dump the
// caller is not reading.
func (r *Reader) InSegment() bool { return r.segEnd >= 0 && r.in.off <= r.segEnd }

// OtherDumps steps over damage inside the segments of dumps other than the one a reader in
// file order wants, as reading by segments (ScanSegments), which never looks inside those,
// does: a file then gives the same answer plain and compressed. Wanting the last dump (Want 0),
// any dump may turn out to be it, so damage is kept until a later dump starts, and Err returns
// it if none did.
type OtherDumps struct {
	Want int // the dump wanted (1-based), 0 for the last
	err  error
	dump int // the dump err is in
}

// Skip takes the error r's Next returned, other than io.EOF: it reports whether the rest of
// the damaged segment was stepped over, and the caller reads on.
func (o *OtherDumps) Skip(r *Reader, err error) bool {
	if Truncated(err) || !r.InSegment() || (o.Want != 0 && r.Dumps() == o.Want) {
		return false
	}
	if r.SkipSegment() != nil {
		return false
	}
	if o.Want == 0 && o.err == nil {
		o.err, o.dump = err, r.Dumps()
	}
	return true
}

// Started says that dump has started: damage in an earlier one is not the last dump's.
func (o *OtherDumps) Started(dump int) {
	if o.err != nil && o.dump < dump {
		o.err = nil
	}
}

// Err returns the damage kept for the last dump, once the file is read to its end.
func (o *OtherDumps) Err() error { return o.err }

// CountDumps reads on to the end of the input, skipping heap-dump bodies, and returns the number
// of heap dumps in the whole file.
func (r *Reader) CountDumps() (int, error) {
	for {
		if err := r.SkipSegment(); err != nil {
			return r.dumps, err
		}
		if _, err := r.Next(); err == io.EOF {
			return r.dumps, nil
		} else if err != nil {
			return r.dumps, err
		}
	}
}

func (r *Reader) segName() string { return fmt.Sprintf("%v at offset %d", r.segTag, r.segOff) }

func (r *Reader) top() (*Record, error) {
	off := r.in.off
	b, err := r.in.peek(9)
	if err != nil {
		if err == io.EOF && len(b) == 0 {
			return nil, io.EOF
		}
		return nil, r.errAt(off, "record header", "truncated record header", err)
	}
	tag := Tag(b[0])
	n := int64(binary.BigEndian.Uint32(b[5:]))
	r.rec = Record{Tag: tag, Offset: off}
	rec := &r.rec
	r.in.consume(9)
	switch tag {
	case TagHeapDump, TagHeapDumpSegment:
		if tag == TagHeapDump || !r.open {
			r.dumps++
		}
		r.open = true
		r.segTag, r.segOff, r.segEnd = tag, off, r.in.off+n
		rec.Dump = r.dumps
		return rec, nil
	case TagHeapDumpEnd:
		r.open = false
		rec.Dump = r.dumps
	}
	body, err := r.in.peek(int(n))
	if err != nil {
		return nil, r.errAt(r.in.off, fmt.Sprintf("%v at offset %d", tag, off), fmt.Sprintf("body of %d bytes is cut short", n), err)
	}
	id := r.IDSize
	short := func(want int) error {
		return &FormatError{Offset: off, Record: tag.String(), Msg: fmt.Sprintf("body of %d bytes is shorter than the %d it needs", n, want)}
	}
	switch tag {
	case TagUTF8:
		if int(n) < id {
			return nil, short(id)
		}
		rec.ID = r.readID(body)
		rec.Data = body[id:]
	case TagLoadClass:
		if int(n) < 8+2*id {
			return nil, short(8 + 2*id)
		}
		rec.Serial = binary.BigEndian.Uint32(body)
		rec.ID = r.readID(body[4:])
		rec.NameID = r.readID(body[8+id:])
	default:
		rec.Data = body
	}
	r.in.consume(int(n))
	return rec, nil
}

func (r *Reader) readID(b []byte) uint64 {
	if r.IDSize == 4 {
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

// ReadID decodes an identifier of the reader's size from the start of b.
func (r *Reader) ReadID(b []byte) uint64 { return r.readID(b) }

// sub parses one heap-dump sub-record. Fixed-size parts are peeked first so that a truncated
// file is reported at the record it breaks, never as a panic or a bogus huge allocation.
func (r *Reader) sub() (*Record, error) {
	if rec := r.fastSub(); rec != nil {
		return rec, nil
	}
	off := r.in.off
	id := r.IDSize
	b, err := r.in.peek(1)
	if err != nil {
		return nil, r.errAt(off, r.segName(), "truncated sub-record", err)
	}
	tag := SubTag | Tag(b[0])
	r.rec = Record{Tag: tag, Offset: off, Dump: r.dumps}
	rec := &r.rec
	var head int // fixed part after the tag byte
	switch tag {
	case TagRootUnknown, TagRootStickyClass, TagRootMonitorUsed:
		head = id
	case TagRootJNIGlobal:
		head = 2 * id
	case TagRootJNILocal, TagRootJavaFrame, TagRootThreadObj:
		head = id + 8
	case TagRootNativeStack, TagRootThreadBlock:
		head = id + 4
	case TagClassDump:
		return r.classDump(off)
	case TagInstanceDump:
		head = 2*id + 8
	case TagObjArrayDump:
		head = 2*id + 8
	case TagPrimArrayDump:
		head = id + 9
	default:
		return nil, &FormatError{Offset: off, Record: r.segName(), Msg: fmt.Sprintf("unknown heap-dump sub-record tag 0x%02x", uint8(tag))}
	}
	b, err = r.in.peek(1 + head)
	if err != nil {
		return nil, r.errAt(off, fmt.Sprintf("%v at offset %d", tag, off), "truncated", err)
	}
	b = b[1:]
	rec.ID = r.readID(b)
	var body int64
	switch tag {
	case TagRootJNIGlobal:
		rec.NameID = r.readID(b[id:])
	case TagRootJNILocal, TagRootJavaFrame, TagRootThreadObj:
		rec.Serial = binary.BigEndian.Uint32(b[id:])
		rec.Frame = binary.BigEndian.Uint32(b[id+4:])
	case TagRootNativeStack, TagRootThreadBlock:
		rec.Serial = binary.BigEndian.Uint32(b[id:])
	case TagInstanceDump:
		rec.Serial = binary.BigEndian.Uint32(b[id:])
		rec.Class = r.readID(b[id+4:])
		body = int64(binary.BigEndian.Uint32(b[2*id+4:]))
	case TagObjArrayDump:
		rec.Serial = binary.BigEndian.Uint32(b[id:])
		rec.Length = binary.BigEndian.Uint32(b[id+4:])
		rec.Class = r.readID(b[id+8:])
		body = int64(rec.Length) * int64(id)
	case TagPrimArrayDump:
		rec.Serial = binary.BigEndian.Uint32(b[id:])
		rec.Length = binary.BigEndian.Uint32(b[id+4:])
		rec.Elem = Type(b[id+8])
		es := rec.Elem.Size(id)
		if es == 0 || rec.Elem == TypeObject {
			return nil, &FormatError{Offset: off, Record: fmt.Sprintf("%v at offset %d", tag, off), Msg: fmt.Sprintf("invalid element type %d", rec.Elem)}
		}
		body = int64(rec.Length) * int64(es)
	}
	end := off + 1 + int64(head) + body
	if end > r.segEnd {
		return nil, &FormatError{Offset: off, Record: fmt.Sprintf("%v at offset %d", tag, off), Msg: fmt.Sprintf("needs %d bytes, runs past the end of %s at %d", end-off, r.segName(), r.segEnd)}
	}
	r.in.consume(1 + head)
	if body > 0 {
		if tag == TagPrimArrayDump && r.SkipPrimitiveData {
			if err := r.in.discard(body); err != nil {
				return nil, r.errAt(off, fmt.Sprintf("%v at offset %d", tag, off), fmt.Sprintf("values (%d bytes) cut short", body), err)
			}
			return rec, nil
		}
		d, err := r.in.peek(int(body))
		if err != nil {
			return nil, r.errAt(off, fmt.Sprintf("%v at offset %d", tag, off), fmt.Sprintf("body (%d bytes) cut short", body), err)
		}
		rec.Data = d
		r.in.consume(int(body))
	}
	return rec, nil
}

// fastSub decodes the two records that make up most of a dump — instances and primitive arrays
// with 8-byte ids — straight from the buffer when they are wholly in it, or returns nil to let
// the general path (which also produces the errors) handle the record.
func (r *Reader) fastSub() *Record {
	if r.IDSize != 8 {
		return nil
	}
	b := r.in.buf[r.in.start:r.in.end]
	if len(b) < 25 {
		return nil
	}
	off := r.in.off
	switch b[0] {
	case 0x21:
		total := 25 + int(binary.BigEndian.Uint32(b[21:]))
		if total > len(b) || off+int64(total) > r.segEnd {
			return nil
		}
		r.rec = Record{Tag: TagInstanceDump, Offset: off, Dump: r.dumps, ID: binary.BigEndian.Uint64(b[1:]),
			Serial: binary.BigEndian.Uint32(b[9:]), Class: binary.BigEndian.Uint64(b[13:]), Data: b[25:total]}
		r.in.consume(total)
		return &r.rec
	case 0x23:
		n := binary.BigEndian.Uint32(b[13:])
		t := Type(b[17])
		es := t.Size(8)
		if es == 0 || t == TypeObject {
			return nil
		}
		total := 18 + int64(n)*int64(es)
		// Arrays not wholly buffered (large ones, or at a buffer edge) take the general path.
		if off+total > r.segEnd || total > int64(len(b)) {
			return nil
		}
		r.rec = Record{Tag: TagPrimArrayDump, Offset: off, Dump: r.dumps, ID: binary.BigEndian.Uint64(b[1:]),
			Serial: binary.BigEndian.Uint32(b[9:]), Length: n, Elem: t}
		if !r.SkipPrimitiveData {
			r.rec.Data = b[18:total]
		}
		r.in.consume(int(total))
		return &r.rec
	}
	return nil
}

// classDump measures a CLASS DUMP sub-record (its length depends on its contents) and returns it
// with Data holding everything after the class id.
func (r *Reader) classDump(off int64) (*Record, error) {
	id := r.IDSize
	name := fmt.Sprintf("CLASS DUMP at offset %d", off)
	n := 1 + 7*id + 8 + 2 // tag, ids, stack serial, instance size, constant count
	need := func(k int) ([]byte, error) {
		if off+int64(k) > r.segEnd {
			return nil, &FormatError{Offset: off, Record: name, Msg: fmt.Sprintf("runs past the end of %s at %d", r.segName(), r.segEnd)}
		}
		b, err := r.in.peek(k)
		if err != nil {
			return nil, r.errAt(off, name, "truncated", err)
		}
		return b, nil
	}
	b, err := need(n)
	if err != nil {
		return nil, err
	}
	count := int(binary.BigEndian.Uint16(b[n-2:]))
	for i := 0; i < count; i++ {
		if b, err = need(n + 3); err != nil {
			return nil, err
		}
		s := Type(b[n+2]).Size(id)
		if s == 0 {
			return nil, &FormatError{Offset: off + int64(n), Record: name, Msg: fmt.Sprintf("constant %d has invalid type %d", i, b[n+2])}
		}
		n += 3 + s
	}
	if b, err = need(n + 2); err != nil {
		return nil, err
	}
	count = int(binary.BigEndian.Uint16(b[n:]))
	n += 2
	for i := 0; i < count; i++ {
		if b, err = need(n + id + 1); err != nil {
			return nil, err
		}
		s := Type(b[n+id]).Size(id)
		if s == 0 {
			return nil, &FormatError{Offset: off + int64(n), Record: name, Msg: fmt.Sprintf("static field %d has invalid type %d", i, b[n+id])}
		}
		n += id + 1 + s
	}
	if b, err = need(n + 2); err != nil {
		return nil, err
	}
	count = int(binary.BigEndian.Uint16(b[n:]))
	n += 2 + count*(id+1)
	if b, err = need(n); err != nil {
		return nil, err
	}
	r.rec = Record{Tag: TagClassDump, Offset: off, Dump: r.dumps, ID: r.readID(b[1:]), Data: b[1+id : n]}
	r.in.consume(n)
	return &r.rec, nil
}

// ClassDump decodes the body of a CLASS DUMP record returned by Next. It allocates, which is
// fine: a dump has thousands of classes, not millions.
func (r *Reader) ClassDump(rec *Record) (*ClassDump, error) {
	c, err := DecodeClassDump(rec.ID, rec.Data, r.IDSize, rec.Offset)
	if err != nil && r.Gzip {
		inflated(err)
	}
	return c, err
}

// DecodeClassDump decodes a CLASS DUMP body (everything after the class id), as found in
// Record.Data. off is used in error messages only.
func DecodeClassDump(classID uint64, b []byte, idSize int, off int64) (*ClassDump, error) {
	p := 0
	bad := func(msg string) error {
		return &FormatError{Offset: off + 1 + int64(idSize) + int64(p), Record: fmt.Sprintf("CLASS DUMP at offset %d", off), Msg: msg}
	}
	need := func(k int) error {
		if p+k > len(b) {
			return bad("truncated")
		}
		return nil
	}
	rid := func() uint64 {
		var v uint64
		if idSize == 4 {
			v = uint64(binary.BigEndian.Uint32(b[p:]))
		} else {
			v = binary.BigEndian.Uint64(b[p:])
		}
		p += idSize
		return v
	}
	val := func(t Type) (uint64, error) {
		s := t.Size(idSize)
		if s == 0 {
			return 0, bad(fmt.Sprintf("invalid type %d", t))
		}
		if err := need(s); err != nil {
			return 0, err
		}
		var v uint64
		for i := 0; i < s; i++ {
			v = v<<8 | uint64(b[p+i])
		}
		p += s
		return v, nil
	}
	count := func() (int, error) {
		if err := need(2); err != nil {
			return 0, err
		}
		p += 2
		return int(binary.BigEndian.Uint16(b[p-2:])), nil
	}
	c := &ClassDump{ID: classID}
	if err := need(4 + 6*idSize + 6); err != nil {
		return nil, err
	}
	c.Stack = binary.BigEndian.Uint32(b)
	p = 4
	c.Super, c.Loader, c.Signers, c.ProtectionDomain = rid(), rid(), rid(), rid()
	rid()
	rid()
	c.InstanceSize = binary.BigEndian.Uint32(b[p:])
	n := int(binary.BigEndian.Uint16(b[p+4:]))
	p += 6
	for i := 0; i < n; i++ {
		if err := need(3); err != nil {
			return nil, err
		}
		v := Value{Index: binary.BigEndian.Uint16(b[p:]), Type: Type(b[p+2])}
		p += 3
		bits, err := val(v.Type)
		if err != nil {
			return nil, err
		}
		v.Bits = bits
		c.Constants = append(c.Constants, v)
	}
	n, err := count()
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		if err := need(idSize + 1); err != nil {
			return nil, err
		}
		s := Static{NameID: rid()}
		s.Value.Type = Type(b[p])
		p++
		bits, err := val(s.Value.Type)
		if err != nil {
			return nil, err
		}
		s.Value.Bits = bits
		c.Statics = append(c.Statics, s)
	}
	if n, err = count(); err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		if err := need(idSize + 1); err != nil {
			return nil, err
		}
		f := Field{NameID: rid(), Type: Type(b[p])}
		p++
		if f.Type.Size(idSize) == 0 {
			return nil, bad(fmt.Sprintf("instance field %d has invalid type %d", i, f.Type))
		}
		c.Fields = append(c.Fields, f)
	}
	return c, nil
}

func (r *Reader) errAt(off int64, rec, msg string, err error) error {
	fe := &FormatError{Offset: off, Record: rec, Msg: msg}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		fe.truncated = true
		fe.Msg += fmt.Sprintf(" (input ends at offset %d)", r.in.off+int64(r.in.end-r.in.start))
	} else if err != nil {
		// Not the end of the input but a failure to read it (a damaged gzip member): msg,
		// which says what the input's end would have cut short, does not apply.
		fe.Msg = "cannot read on: " + err.Error()
		var member *memberDamage
		if damaged(err) && !errors.As(err, &member) {
			// One gzip stream is checked only at its end, or where its deflate data stops
			// making sense: the bytes handed on before then may be damaged too, and the record
			// this error names is only where the parser stopped, most often on such bytes.
			fe.Msg = "the gzip data is damaged, and the records read from it before the damage showed may be wrong too (this one most likely is): " + err.Error()
		}
	}
	return fe
}

// input is a growable read buffer that tracks the stream offset of its first unread byte.
// Records are parsed in place from buf[start:end]; the buffer grows only as data actually
// arrives, so a corrupt length field cannot make it allocate more than the input holds (×2).
type input struct {
	r          io.Reader
	buf        []byte
	start, end int
	off        int64 // stream offset of buf[start]
	eof        error
	// big is the buffer size a long input switches to (0: the buffer grows only when a record
	// needs it, for readers that mostly skip).
	big int
	// short, when not 0, caps the next read (see skipTo).
	short int
}

func (in *input) grow(n int) {
	if n <= len(in.buf) {
		return
	}
	nb := make([]byte, n)
	copy(nb, in.buf[in.start:in.end])
	in.end -= in.start
	in.start = 0
	in.buf = nb
}

// peek returns the next n unread bytes without consuming them. On a short input it returns what
// there is with io.EOF (nothing at all) or io.ErrUnexpectedEOF. Small enough to be inlined: the
// bytes are nearly always already buffered.
func (in *input) peek(n int) ([]byte, error) {
	if in.end-in.start >= n {
		return in.buf[in.start : in.start+n], nil
	}
	return in.fill(n)
}

func (in *input) fill(n int) ([]byte, error) {
	for in.end-in.start < n {
		if in.eof != nil {
			if in.end == in.start && in.eof == io.EOF {
				return in.buf[in.start:in.end], io.EOF
			}
			if in.eof == io.EOF {
				return in.buf[in.start:in.end], io.ErrUnexpectedEOF
			}
			return in.buf[in.start:in.end], in.eof
		}
		if in.start > 0 && in.end+(n-(in.end-in.start)) > len(in.buf) {
			copy(in.buf, in.buf[in.start:in.end])
			in.end -= in.start
			in.start = 0
		}
		if in.end == len(in.buf) {
			// Double rather than jump to n: the data must arrive before more memory is taken.
			in.grow(2 * len(in.buf))
		} else if len(in.buf) < in.big && in.off > int64(in.big) {
			// A big input: large reads from here on.
			in.grow(in.big)
		}
		to := len(in.buf)
		if in.short > 0 {
			to, in.short = min(to, in.end+in.short), 0
		}
		m, err := in.r.Read(in.buf[in.end:to])
		in.end += m
		if err != nil {
			in.eof = err
		}
	}
	return in.buf[in.start : in.start+n], nil
}

func (in *input) consume(n int) {
	in.start += n
	in.off += int64(n)
	if in.start == in.end {
		in.start, in.end = 0, 0
	}
}

// discard skips n bytes without growing the buffer.
func (in *input) discard(n int64) error {
	for n > 0 {
		if in.end == in.start {
			if _, err := in.peek(1); err != nil {
				return err
			}
		}
		k := int64(in.end - in.start)
		if k > n {
			k = n
		}
		in.consume(int(k))
		n -= k
	}
	return nil
}

// primSize is the size of each primitive type, 0 for the rest: a table, for Type.Size and for the
// loop of Headers.
var primSize = [16]uint8{TypeBoolean: 1, TypeByte: 1, TypeChar: 2, TypeShort: 2, TypeFloat: 4, TypeInt: 4, TypeDouble: 8, TypeLong: 8}

// Header is what callers that want little more than objects' headers (a graph's first pass)
// take from an INSTANCE DUMP or PRIMITIVE ARRAY DUMP sub-record. It holds no pointer, so that
// filling a batch of them is plain stores.
type Header struct {
	Tag    Tag    // TagInstanceDump or TagPrimArrayDump
	Elem   Type   // a primitive array's element type
	Length uint32 // a primitive array's element count
	ID     uint64
	Class  uint64 // an instance's class id
	Offset int64  // of the sub-record's tag byte in the stream, as Record.Offset
}

// Headers is Next in batches for such callers. It fills hs with the instance dumps and
// primitive arrays that lie wholly in the buffer from the reader's position on (most of a dump),
// straight from the buffer, and returns how many. When fields is not nil (it must be as long as
// hs), fields[i] is set to an instance's field values, in the reader's buffer and valid until
// the next call. When the first record is not one of those, or does not lie wholly in the
// buffer, Headers returns 0 and what Next returns for it, so that every other record, every
// refill and every error is Next's. A batch rather than a callback per record: the loop that
// decodes the headers and the one that uses them then keep their state in registers.
func (r *Reader) Headers(hs []Header, fields [][]byte) (int, *Record, error) {
	// Headers is the loop of a graph's first pass: its decoding is written for the compiler to
	// check bounds once per record.
	b := r.Buffered()
	p, n := 0, 0
	off := r.in.off
loop:
	for n < len(hs) && p+25 <= len(b) {
		x := (*[25]byte)(b[p:]) // one bounds check for every field of the header
		h := &hs[n]
		switch x[0] {
		case 0x21:
			end := p + 25 + int(binary.BigEndian.Uint32(x[21:]))
			if end > len(b) || end < p { // end < p: overflow where int has 32 bits
				break loop
			}
			*h = Header{Tag: TagInstanceDump, ID: binary.BigEndian.Uint64(x[1:]), Class: binary.BigEndian.Uint64(x[13:]), Offset: off + int64(p)}
			if fields != nil {
				fields[n] = b[p+25 : end]
			}
			p = end
		case 0x23:
			t := Type(x[17])
			count := binary.BigEndian.Uint32(x[13:])
			end := p + 18 + int(count)*int(primSize[t&15])
			if primSize[t&15] == 0 || t > 15 || end > len(b) || end < p {
				break loop
			}
			*h = Header{Tag: TagPrimArrayDump, Elem: t, Length: count, ID: binary.BigEndian.Uint64(x[1:]), Offset: off + int64(p)}
			p = end
		default:
			break loop
		}
		n++
	}
	r.in.consume(p)
	if n > 0 {
		return n, nil, nil
	}
	rec, err := r.Next()
	return 0, rec, err
}
