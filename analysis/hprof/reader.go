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
	noFast  bool // the tests' switch: decode every sub-record on the general path
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
	if magic, err := br.Peek(2); err == nil && isGzipMagic(magic) {
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
	id := r.IDSize
	head := recordBody.At(id)
	b, err := r.in.peek(head)
	if err != nil {
		if err == io.EOF && len(b) == 0 {
			return nil, io.EOF
		}
		return nil, r.errAt(off, "record header", "truncated record header", err)
	}
	tag := Tag(b[0])
	n := int(binary.BigEndian.Uint32(b[recordLength.At(id):]))
	r.rec = Record{Tag: tag, Offset: off}
	rec := &r.rec
	switch tag {
	case TagHeapDump, TagHeapDumpSegment:
		r.in.consume(head)
		if tag == TagHeapDump || !r.open {
			r.dumps++
		}
		r.open = true
		r.segTag, r.segOff, r.segEnd = tag, off, r.in.off+int64(n)
		rec.Dump = r.dumps
		return rec, nil
	case TagHeapDumpEnd:
		r.open = false
		rec.Dump = r.dumps
	}
	end := head + n
	if b, err = r.in.peek(end); err != nil {
		return nil, r.errAt(off+int64(head), fmt.Sprintf("%v at offset %d", tag, off), fmt.Sprintf("body of %d bytes is cut short", n), err)
	}
	short := func(want Place) error {
		return &FormatError{Offset: off, Record: fmt.Sprintf("%v at offset %d", tag, off), Msg: fmt.Sprintf("body of %d bytes is shorter than the %d it needs", n, want.At(id)-head)}
	}
	switch tag {
	case TagUTF8:
		if end < utf8Chars.At(id) {
			return nil, short(utf8Chars)
		}
		rec.ID = r.readID(b[utf8ID.At(id):])
		rec.Data = b[utf8Chars.At(id):end]
	case TagLoadClass:
		if end < loadClassEnd.At(id) {
			return nil, short(loadClassEnd)
		}
		rec.Serial = binary.BigEndian.Uint32(b[loadClassSerial.At(id):])
		rec.ID = r.readID(b[loadClassID.At(id):])
		rec.NameID = r.readID(b[loadClassName.At(id):])
	default:
		rec.Data = b[head:end]
	}
	r.in.consume(end)
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
	if tag == TagClassDump {
		return r.classDump(off)
	}
	head := subHeads[b[0]].At(id)
	if head == 0 {
		return nil, &FormatError{Offset: off, Record: r.segName(), Msg: fmt.Sprintf("unknown heap-dump sub-record tag 0x%02x", uint8(tag))}
	}
	name := func() string { return fmt.Sprintf("%v at offset %d", tag, off) }
	if b, err = r.in.peek(head); err != nil {
		return nil, r.errAt(off, name(), "truncated", err)
	}
	r.rec = Record{Tag: tag, Offset: off, Dump: r.dumps}
	rec := &r.rec
	var body int64 // what follows the fixed part
	switch tag {
	case TagInstanceDump:
		rec.ID = r.readID(b[InstanceID.At(id):])
		rec.Serial = binary.BigEndian.Uint32(b[InstanceStack.At(id):])
		rec.Class = r.readID(b[InstanceClass.At(id):])
		body = int64(binary.BigEndian.Uint32(b[InstanceFieldBytes.At(id):]))
	case TagObjArrayDump:
		rec.ID = r.readID(b[ObjArrayID.At(id):])
		rec.Serial = binary.BigEndian.Uint32(b[ObjArrayStack.At(id):])
		rec.Length = binary.BigEndian.Uint32(b[ObjArrayLength.At(id):])
		rec.Class = r.readID(b[ObjArrayClass.At(id):])
		body = int64(rec.Length) * int64(id)
	case TagPrimArrayDump:
		rec.ID = r.readID(b[PrimArrayID.At(id):])
		rec.Serial = binary.BigEndian.Uint32(b[PrimArrayStack.At(id):])
		rec.Length = binary.BigEndian.Uint32(b[PrimArrayLength.At(id):])
		rec.Elem = Type(b[PrimArrayType.At(id)])
		es := rec.Elem.Size(id)
		if es == 0 || rec.Elem == TypeObject {
			return nil, &FormatError{Offset: off + int64(PrimArrayType.At(id)), Record: name(), Msg: fmt.Sprintf("invalid element type %d", rec.Elem)}
		}
		body = int64(rec.Length) * int64(es)
	default:
		r.root(rec, b)
	}
	end := off + int64(head) + body
	if end > r.segEnd {
		return nil, &FormatError{Offset: off, Record: name(), Msg: fmt.Sprintf("needs %d bytes, runs past the end of %s at %d", end-off, r.segName(), r.segEnd)}
	}
	r.in.consume(head)
	if body > 0 {
		if tag == TagPrimArrayDump && r.SkipPrimitiveData {
			if err := r.in.discard(body); err != nil {
				return nil, r.errAt(off, name(), fmt.Sprintf("values (%d bytes) cut short", body), err)
			}
			return rec, nil
		}
		d, err := r.in.peek(int(body))
		if err != nil {
			return nil, r.errAt(off, name(), fmt.Sprintf("body (%d bytes) cut short", body), err)
		}
		rec.Data = d
		r.in.consume(int(body))
	}
	return rec, nil
}

// root decodes the fixed part b of a GC-root sub-record into rec.
func (r *Reader) root(rec *Record, b []byte) {
	id := r.IDSize
	rec.ID = r.readID(b[rootID.At(id):])
	switch rec.Tag {
	case TagRootJNIGlobal:
		rec.NameID = r.readID(b[rootJNIGlobalRef.At(id):])
	case TagRootJNILocal, TagRootJavaFrame, TagRootThreadObj:
		rec.Serial = binary.BigEndian.Uint32(b[rootThread.At(id):])
		rec.Frame = binary.BigEndian.Uint32(b[rootFrame.At(id):])
	case TagRootNativeStack, TagRootThreadBlock:
		rec.Serial = binary.BigEndian.Uint32(b[rootThread.At(id):])
	}
}

// fastSub decodes the two records that make up most of a dump — instances and primitive arrays
// with 8-byte ids — straight from the buffer when they are wholly in it, or returns nil to let
// the general path (which also produces the errors) handle the record.
func (r *Reader) fastSub() *Record {
	if r.IDSize != 8 || r.noFast {
		return nil
	}
	b := r.in.buf[r.in.start:r.in.end]
	if len(b) < FastHead {
		return nil
	}
	off := r.in.off
	switch b[0] {
	case InstanceDumpByte:
		total := InstanceFields.At(8) + int(binary.BigEndian.Uint32(b[InstanceFieldBytes.At(8):]))
		if total > len(b) || off+int64(total) > r.segEnd {
			return nil
		}
		r.rec = Record{Tag: TagInstanceDump, Offset: off, Dump: r.dumps, ID: binary.BigEndian.Uint64(b[InstanceID.At(8):]),
			Serial: binary.BigEndian.Uint32(b[InstanceStack.At(8):]), Class: binary.BigEndian.Uint64(b[InstanceClass.At(8):]),
			Data: b[InstanceFields.At(8):total]}
		r.in.consume(total)
		return &r.rec
	case PrimArrayDumpByte:
		n := binary.BigEndian.Uint32(b[PrimArrayLength.At(8):])
		t := Type(b[PrimArrayType.At(8)])
		es := t.Size(8)
		if es == 0 || t == TypeObject {
			return nil
		}
		total := int64(PrimArrayElems.At(8)) + int64(n)*int64(es)
		// Arrays not wholly buffered (large ones, or at a buffer edge) take the general path.
		if off+total > r.segEnd || total > int64(len(b)) {
			return nil
		}
		r.rec = Record{Tag: TagPrimArrayDump, Offset: off, Dump: r.dumps, ID: binary.BigEndian.Uint64(b[PrimArrayID.At(8):]),
			Serial: binary.BigEndian.Uint32(b[PrimArrayStack.At(8):]), Length: n, Elem: t}
		if !r.SkipPrimitiveData {
			r.rec.Data = b[PrimArrayElems.At(8):total]
		}
		r.in.consume(int(total))
		return &r.rec
	}
	return nil
}

// classDump measures a CLASS DUMP sub-record (its length depends on its contents, walkClassDump)
// and returns it with Data holding everything after the class id.
func (r *Reader) classDump(off int64) (*Record, error) {
	id := r.IDSize
	name := func() string { return fmt.Sprintf("CLASS DUMP at offset %d", off) }
	need := classHead.At(id)
	for {
		if off+int64(need) > r.segEnd {
			return nil, &FormatError{Offset: off, Record: name(), Msg: fmt.Sprintf("runs past the end of %s at %d", r.segName(), r.segEnd)}
		}
		if _, err := r.in.peek(need); err != nil {
			return nil, r.errAt(off, name(), "truncated", err)
		}
		// All that is buffered, not only the bytes asked for: the walk then nearly always
		// finds the whole record in one go.
		b := r.in.buf[r.in.start:r.in.end]
		n, bad := walkClassDump(b, 0, id, nil)
		if bad == nil {
			r.rec = Record{Tag: TagClassDump, Offset: off, Dump: r.dumps, ID: r.readID(b[classID.At(id):]), Data: b[classStack.At(id):n]}
			r.in.consume(n)
			return &r.rec, nil
		}
		if bad.need == 0 {
			return nil, &FormatError{Offset: off + int64(bad.at), Record: name(), Msg: bad.msg}
		}
		need = bad.need
	}
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
// Record.Data, of the record at stream offset off, which errors count from.
func DecodeClassDump(classID uint64, b []byte, idSize int, off int64) (*ClassDump, error) {
	c := &ClassDump{ID: classID}
	if _, bad := walkClassDump(b, classStack.At(idSize), idSize, c); bad != nil {
		msg := bad.msg
		if bad.need > 0 {
			msg = "truncated"
		}
		return nil, &FormatError{Offset: off + int64(bad.at), Record: fmt.Sprintf("CLASS DUMP at offset %d", off), Msg: msg}
	}
	return c, nil
}

// walkBad is where walkClassDump stopped: at the record offset at, the entry at fault, either
// because the bytes end there (need: the bytes from the record's start that the walk needs to
// go on) or because of what msg says.
type walkBad struct {
	at, need int
	msg      string
}

// classWalk is a cursor over a CLASS DUMP of which b holds the bytes from record offset skip on.
type classWalk struct {
	b            []byte
	skip, idSize int
	p            int // record offset of the next field
}

func (w *classWalk) at(p int) []byte { return w.b[p-w.skip:] }

func (w *classWalk) id(p int) uint64 {
	if w.idSize == 4 {
		return uint64(binary.BigEndian.Uint32(w.at(p)))
	}
	return binary.BigEndian.Uint64(w.at(p))
}

// need says whether b reaches record offset end, and where the walk stopped when not.
func (w *classWalk) need(end int) *walkBad {
	if w.skip+len(w.b) < end {
		return &walkBad{at: w.p, need: end}
	}
	return nil
}

// count reads a list's u2 count and checks, before anything is allocated for them, that b can
// hold that many entries of at least least bytes each.
func (w *classWalk) count(least int) (int, *walkBad) {
	if bad := w.need(w.p + 2); bad != nil {
		return 0, bad
	}
	n := int(binary.BigEndian.Uint16(w.at(w.p)))
	w.p += 2
	return n, w.need(w.p + n*least)
}

// typed checks the entry at w.p, entry i of the list what: head bytes ending with a type, and
// when valued a value of that type after them. It returns the type and the value's size.
func (w *classWalk) typed(head Place, valued bool, what string, i int) (Type, int, *walkBad) {
	h := head.At(w.idSize)
	if bad := w.need(w.p + h); bad != nil {
		return 0, 0, bad
	}
	t := Type(w.at(w.p + h - 1)[0])
	s := t.Size(w.idSize)
	if s == 0 {
		return 0, 0, &walkBad{at: w.p, msg: fmt.Sprintf("%s %d has invalid type %d", what, i, t)}
	}
	if !valued {
		return t, 0, nil
	}
	return t, s, w.need(w.p + h + s)
}

// value reads the s-byte value at p.
func (w *classWalk) value(p, s int) uint64 {
	var v uint64
	for _, x := range w.at(p)[:s] {
		v = v<<8 | uint64(x)
	}
	return v
}

// list walks a counted list of entries that start with head (ending with a type) and, when
// valued, go on with a value of that type. With add not nil it checks every entry's type and
// calls add with the list's length, the entry's place, its type and its value's size; without,
// it only measures, which for entries of one size needs no look at them.
func (w *classWalk) list(head Place, valued bool, what string, add func(n, p int, t Type, s int)) *walkBad {
	h := head.At(w.idSize)
	least := h
	if valued {
		least++ // a value takes a byte at least
	}
	n, bad := w.count(least)
	if bad != nil || (add == nil && !valued) {
		w.p += n * h
		return bad
	}
	for i := 0; i < n; i++ {
		t, s, bad := w.typed(head, valued, what, i)
		if bad != nil {
			return bad
		}
		if add != nil {
			add(n, w.p, t, s)
		}
		w.p += h + s
	}
	return nil
}

// walkClassDump walks a CLASS DUMP of which b holds the bytes from record offset skip on (0: b
// starts at the tag byte; Record.Data starts at the stack serial) and returns the record's
// length. It checks every type that sizes a value, and every count against the bytes before it
// reads on: where b ends first it says how many bytes it needs (walkBad.need), so that a reader
// asks for them only if its segment holds them. With c not nil it also fills in c, and checks the
// types of the instance fields, which a walk that only measures does not need. The record is:
//  1. the fixed fields, up to the constants' count (classHead);
//  2. the constants: index and type (constantHead), then the value;
//  3. the static fields: name id and type (staticHead), then the value;
//  4. the instance fields: name id and type (fieldDecl).
func walkClassDump(b []byte, skip, idSize int, c *ClassDump) (int, *walkBad) {
	w := &classWalk{b: b, skip: skip, idSize: idSize, p: skip}
	if bad := w.need(classHead.At(idSize)); bad != nil {
		return 0, bad
	}
	var constant, static, field func(n, p int, t Type, s int)
	if c != nil {
		c.Stack = binary.BigEndian.Uint32(w.at(classStack.At(idSize)))
		c.Super, c.Loader = w.id(classSuper.At(idSize)), w.id(classLoader.At(idSize))
		c.Signers, c.ProtectionDomain = w.id(classSigners.At(idSize)), w.id(classProtection.At(idSize))
		c.InstanceSize = binary.BigEndian.Uint32(w.at(classInstanceSize.At(idSize)))
		// Each list is made as long as its count once its entries are known to fit.
		constant = func(n, p int, t Type, s int) {
			if c.Constants == nil {
				c.Constants = make([]Value, 0, n)
			}
			c.Constants = append(c.Constants, Value{Index: binary.BigEndian.Uint16(w.at(p)), Type: t, Bits: w.value(p+constantHead.At(idSize), s)})
		}
		static = func(n, p int, t Type, s int) {
			if c.Statics == nil {
				c.Statics = make([]Static, 0, n)
			}
			c.Statics = append(c.Statics, Static{NameID: w.id(p), Value: Value{Type: t, Bits: w.value(p+staticHead.At(idSize), s)}})
		}
		field = func(n, p int, t Type, _ int) {
			if c.Fields == nil {
				c.Fields = make([]Field, 0, n)
			}
			c.Fields = append(c.Fields, Field{NameID: w.id(p), Type: t})
		}
	}
	w.p = classConstants.At(idSize)
	if bad := w.list(constantHead, true, "constant", constant); bad != nil {
		return 0, bad
	}
	if bad := w.list(staticHead, true, "static field", static); bad != nil {
		return 0, bad
	}
	if bad := w.list(fieldDecl, false, "instance field", field); bad != nil {
		return 0, bad
	}
	return w.p, nil
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
	for n < len(hs) && p+FastHead <= len(b) {
		x := (*[FastHead]byte)(b[p:]) // one bounds check for every field of the header
		h := &hs[n]
		switch x[0] {
		case InstanceDumpByte:
			end := p + InstanceFields.At(8) + int(binary.BigEndian.Uint32(x[InstanceFieldBytes.At(8):]))
			if end > len(b) || end < p { // end < p: overflow where int has 32 bits
				break loop
			}
			*h = Header{Tag: TagInstanceDump, ID: binary.BigEndian.Uint64(x[InstanceID.At(8):]), Class: binary.BigEndian.Uint64(x[InstanceClass.At(8):]), Offset: off + int64(p)}
			if fields != nil {
				fields[n] = b[p+InstanceFields.At(8) : end]
			}
			p = end
		case PrimArrayDumpByte:
			t := Type(x[PrimArrayType.At(8)])
			count := binary.BigEndian.Uint32(x[PrimArrayLength.At(8):])
			end := p + PrimArrayElems.At(8) + int(count)*int(primSize[t&15])
			if primSize[t&15] == 0 || t > 15 || end > len(b) || end < p {
				break loop
			}
			*h = Header{Tag: TagPrimArrayDump, Elem: t, Length: count, ID: binary.BigEndian.Uint64(x[PrimArrayID.At(8):]), Offset: off + int64(p)}
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
