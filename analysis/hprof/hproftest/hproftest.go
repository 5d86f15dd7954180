// Package hproftest synthesises small HPROF files for tests: edge cases real JVMs rarely write
// (4-byte identifiers, several dumps in one file, records in unusual orders, no GC roots).
package hproftest

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/heapledger/heapledger/analysis/hprof"
)

// Field declares an instance or static field.
type Field struct {
	Name string
	Type hprof.Type
}

// Builder accumulates an HPROF file. Sub-records go into the current segment, which
// StartSegment opens and EndSegment closes (writing its length).
type Builder struct {
	IDSize  int
	out     []byte
	seg     []byte
	inSeg   bool
	segTag  byte
	strings map[string]uint64
	nextStr uint64
	serial  uint32
	fields  map[uint64][]Field // class id → instance fields declared by it
	super   map[uint64]uint64
}

// New starts a file with identifiers of idSize bytes.
func New(idSize int) *Builder {
	b := &Builder{IDSize: idSize, strings: map[string]uint64{}, nextStr: 0x100000, fields: map[uint64][]Field{}, super: map[uint64]uint64{}}
	b.out = append(b.out, "JAVA PROFILE 1.0.2\x00"...)
	b.out = binary.BigEndian.AppendUint32(b.out, uint32(idSize))
	b.out = binary.BigEndian.AppendUint64(b.out, 1700000000000)
	return b
}

func (b *Builder) id(dst []byte, v uint64) []byte {
	if b.IDSize == 4 {
		return binary.BigEndian.AppendUint32(dst, uint32(v))
	}
	return binary.BigEndian.AppendUint64(dst, v)
}

func (b *Builder) record(tag byte, body []byte) {
	b.out = append(b.out, tag)
	b.out = binary.BigEndian.AppendUint32(b.out, 0)
	b.out = binary.BigEndian.AppendUint32(b.out, uint32(len(body)))
	b.out = append(b.out, body...)
}

// Str returns the id of a UTF8 record holding s, writing the record the first time.
func (b *Builder) Str(s string) uint64 {
	if id, ok := b.strings[s]; ok {
		return id
	}
	b.nextStr += 8
	id := b.nextStr
	b.strings[s] = id
	b.record(byte(hprof.TagUTF8), append(b.id(nil, id), s...))
	return id
}

// LoadClass writes a LOAD CLASS record naming class id (internal form, "java/lang/Object").
func (b *Builder) LoadClass(id uint64, name string) {
	nid := b.Str(name)
	b.serial++
	body := binary.BigEndian.AppendUint32(nil, b.serial)
	body = b.id(body, id)
	body = binary.BigEndian.AppendUint32(body, 0)
	body = b.id(body, nid)
	b.record(byte(hprof.TagLoadClass), body)
}

// StartSegment opens a HEAP DUMP SEGMENT (or, with whole=true, a HEAP DUMP record).
func (b *Builder) StartSegment(whole bool) {
	b.seg, b.inSeg, b.segTag = nil, true, byte(hprof.TagHeapDumpSegment)
	if whole {
		b.segTag = byte(hprof.TagHeapDump)
	}
}

// EndSegment writes the open segment.
func (b *Builder) EndSegment() {
	b.record(b.segTag, b.seg)
	b.inSeg = false
}

// EndDump writes HEAP DUMP END.
func (b *Builder) EndDump() { b.record(byte(hprof.TagHeapDumpEnd), nil) }

// Class writes a CLASS DUMP (and its name's LOAD CLASS unless name is ""). statics maps static
// reference fields to object ids.
func (b *Builder) Class(id, super uint64, name string, fields []Field, statics map[string]uint64) {
	var st []Static
	for n, v := range statics {
		st = append(st, Static{Name: n, Type: hprof.TypeObject, Bits: v})
	}
	b.ClassWithStatics(id, super, name, fields, st)
}

// Static is a static field and its value: an object id, or a primitive's bits.
type Static struct {
	Name string
	Type hprof.Type
	Bits uint64
}

// ClassWithStatics is Class with static fields of any type, in the order given.
func (b *Builder) ClassWithStatics(id, super uint64, name string, fields []Field, statics []Static) {
	if name != "" {
		b.LoadClass(id, name)
	}
	b.fields[id] = fields
	b.super[id] = super
	s := append(b.seg, byte(hprof.TagClassDump&0xff))
	s = b.id(s, id)
	s = binary.BigEndian.AppendUint32(s, 0)
	s = b.id(s, super)
	for i := 0; i < 5; i++ {
		s = b.id(s, 0) // loader, signers, protection domain, reserved ×2
	}
	size := 0
	for _, f := range fields {
		size += f.Type.Size(b.IDSize)
	}
	s = binary.BigEndian.AppendUint32(s, uint32(size))
	s = binary.BigEndian.AppendUint16(s, 0)
	s = binary.BigEndian.AppendUint16(s, uint16(len(statics)))
	for _, st := range statics {
		s = b.id(s, b.strLater(st.Name))
		s = append(s, byte(st.Type))
		for k := st.Type.Size(b.IDSize) - 1; k >= 0; k-- {
			s = append(s, byte(st.Bits>>(8*k)))
		}
	}
	s = binary.BigEndian.AppendUint16(s, uint16(len(fields)))
	for _, f := range fields {
		s = b.id(s, b.strLater(f.Name))
		s = append(s, byte(f.Type))
	}
	b.seg = s
}

// strLater returns a string id for use inside a segment; the UTF8 record is written at top
// level, before the segment (strings must not appear inside segments).
func (b *Builder) strLater(s string) uint64 {
	if id, ok := b.strings[s]; ok {
		return id
	}
	seg := b.seg
	b.seg = nil
	out := b.out
	// Temporarily write the record into a side buffer that is spliced in front of the segment.
	b.out = nil
	id := b.Str(s)
	pre := b.out
	b.out = append(out, pre...)
	b.seg = seg
	return id
}

// Declare tells the builder a class's fields without writing its CLASS DUMP yet, so that
// instances can be written before their class.
func (b *Builder) Declare(id, super uint64, fields []Field) {
	b.fields[id] = fields
	b.super[id] = super
}

// Instance writes an INSTANCE DUMP; values are given per field in dump order (the class's own
// fields, then its superclass's, ...), references as object ids, primitives as raw bits.
func (b *Builder) Instance(id, class uint64, values ...uint64) {
	var data []byte
	i := 0
	for c := class; c != 0; c = b.super[c] {
		for _, f := range b.fields[c] {
			v := uint64(0)
			if i < len(values) {
				v = values[i]
			}
			i++
			sz := f.Type.Size(b.IDSize)
			for k := sz - 1; k >= 0; k-- {
				data = append(data, byte(v>>(8*k)))
			}
		}
	}
	s := append(b.seg, byte(hprof.TagInstanceDump&0xff))
	s = b.id(s, id)
	s = binary.BigEndian.AppendUint32(s, 0)
	s = b.id(s, class)
	s = binary.BigEndian.AppendUint32(s, uint32(len(data)))
	b.seg = append(s, data...)
}

// ObjArray writes an OBJECT ARRAY DUMP.
func (b *Builder) ObjArray(id, class uint64, elems ...uint64) {
	s := append(b.seg, byte(hprof.TagObjArrayDump&0xff))
	s = b.id(s, id)
	s = binary.BigEndian.AppendUint32(s, 0)
	s = binary.BigEndian.AppendUint32(s, uint32(len(elems)))
	s = b.id(s, class)
	for _, e := range elems {
		s = b.id(s, e)
	}
	b.seg = s
}

// PrimArray writes a PRIMITIVE ARRAY DUMP of n zero elements.
func (b *Builder) PrimArray(id uint64, t hprof.Type, n int) {
	b.PrimArrayData(id, t, make([]byte, n*t.Size(b.IDSize)))
}

// PrimArrayData writes a PRIMITIVE ARRAY DUMP whose elements are data, as the dump stores them
// (big-endian); its length is len(data) over the element size.
func (b *Builder) PrimArrayData(id uint64, t hprof.Type, data []byte) {
	s := append(b.seg, byte(hprof.TagPrimArrayDump&0xff))
	s = b.id(s, id)
	s = binary.BigEndian.AppendUint32(s, 0)
	s = binary.BigEndian.AppendUint32(s, uint32(len(data)/t.Size(b.IDSize)))
	s = append(s, byte(t))
	b.seg = append(s, data...)
}

// Root writes a GC-root sub-record of the given tag for object id (thread serial and frame 0).
func (b *Builder) Root(tag hprof.Tag, id uint64) {
	s := append(b.seg, byte(tag&0xff))
	s = b.id(s, id)
	switch tag {
	case hprof.TagRootJNIGlobal:
		s = b.id(s, 0)
	case hprof.TagRootJNILocal, hprof.TagRootJavaFrame, hprof.TagRootThreadObj:
		s = binary.BigEndian.AppendUint64(s, 0)
	case hprof.TagRootNativeStack, hprof.TagRootThreadBlock:
		s = binary.BigEndian.AppendUint32(s, 0)
	}
	b.seg = s
}

// Bytes returns the file so far.
func (b *Builder) Bytes() []byte { return b.out }

// OneObjectDump writes a heap dump of one segment: the dump of class (a root class, no fields),
// one instance of it at id, and a GC root of kind root on the instance.
func (b *Builder) OneObjectDump(class, id uint64, root hprof.Tag) {
	b.StartSegment(false)
	b.Class(class, 0, "", nil, nil)
	b.Instance(id, class)
	b.Root(root, id)
	b.EndSegment()
	b.EndDump()
}

// Chain writes a heap dump of objects A..F (ids 0x100, 0x108, 0x110, 0x120, 0x118, 0x128) of
// class app/Node{next} (0x20, a subclass of java/lang/Object, 0x10): A→B→C→B, D⇄E, F alone, in
// two segments with the instances before the classes, and a JNI-global root on each of roots.
// Without roots every object is unreachable, and the thesis's rule picks A, D (the lowest id of
// its cycle) and F as roots.
func (b *Builder) Chain(roots ...uint64) {
	b.LoadClass(0x10, "java/lang/Object")
	b.LoadClass(0x20, "app/Node")
	b.Declare(0x20, 0x10, []Field{{Name: "next", Type: hprof.TypeObject}})
	b.StartSegment(false)
	b.Instance(0x100, 0x20, 0x108)
	b.Instance(0x108, 0x20, 0x110)
	b.Instance(0x110, 0x20, 0x108)
	b.EndSegment()
	b.StartSegment(false)
	b.Instance(0x120, 0x20, 0x118)
	b.Instance(0x118, 0x20, 0x120)
	b.Instance(0x128, 0x20, 0)
	b.Class(0x20, 0x10, "", []Field{{Name: "next", Type: hprof.TypeObject}}, nil)
	b.Class(0x10, 0, "", nil, nil)
	for _, r := range roots {
		b.Root(hprof.TagRootJNIGlobal, r)
	}
	b.EndSegment()
	b.EndDump()
}

// EmptyLastDump is a file of two heap dumps (8-byte ids) whose second holds a segment with no
// record: one instance of java.lang.Object, a GC root, in dump 1, nothing in dump 2. A reader
// asked for the last dump must give the empty one, not the one before it.
func EmptyLastDump() []byte {
	b := New(8)
	b.LoadClass(0x10, "java/lang/Object")
	b.OneObjectDump(0x10, 0x100, hprof.TagRootUnknown)
	b.StartSegment(false)
	b.EndSegment()
	b.EndDump()
	return b.Bytes()
}

// Fataler is the part of testing.TB that Records needs.
type Fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Records calls fn with each record r reads, to the end, failing t on a read error.
func Records(t Fataler, r *hprof.Reader, fn func(*hprof.Record)) {
	t.Helper()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("reading records: %v", err)
		}
		fn(rec)
	}
}

// DamagedFirstDump is a file of heap dumps (8-byte ids) whose first begins with a sub-record
// tag that does not exist, followed, with second, by one that holds one instance of
// java.lang.Object (id 0x900, class 0x10) held by a GC root. Readers asked for the first dump,
// or for the last when it is the first, must fail on it; asked for the second, or for the last
// when it is the second, must read it whether they look inside the first dump's segments or not.
// Between the dumps lie gap symbol (UTF8) records: a walk over the file then meets the second
// dump well after a reader of the first dump's segment has met the damage.
func DamagedFirstDump(second bool, gap int) []byte {
	b := New(8)
	b.LoadClass(0x10, "java/lang/Object")
	b.StartSegment(false)
	b.Class(0x10, 0, "", nil, nil)
	b.Instance(0x100, 0x10)
	// The segment goes out now, after any names its records wrote: its first sub-record follows
	// the 9-byte record header.
	at := len(b.out) + 9
	b.EndSegment()
	b.EndDump()
	for i := range gap {
		b.Str(fmt.Sprintf("symbol %d", i))
	}
	if second {
		b.OneObjectDump(0x10, 0x900, hprof.TagRootJNIGlobal)
	}
	out := b.Bytes()
	out[at] = 0x30
	return out
}

// RandomHeapClasses is how many classes RandomHeap's dumps hold, each an object of the dump.
const RandomHeapClasses = 3

// RandomHeap is a heap dump (4-byte ids: fewer bytes an object than a JVM's dumps) of objects
// objects besides its classes, from the random seed, in segments of a thousand records, every
// object reachable from its two roots: a list as long as a tenth of them (deep searches), nodes
// with random references (strongly connected components of every size, objects shared by many),
// object arrays and byte arrays. For tests of analyses on a graph larger than a fixture's.
func RandomHeap(objects int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 2))
	b := New(4)
	b.LoadClass(0x10, "java/lang/Object")
	b.LoadClass(0x20, "app/Node")
	b.LoadClass(0x30, "[Ljava/lang/Object;")
	node := []Field{{Name: "next", Type: hprof.TypeObject}, {Name: "other", Type: hprof.TypeObject}, {Name: "data", Type: hprof.TypeObject}}
	b.Declare(0x20, 0x10, node)
	b.StartSegment(false)
	b.Class(0x10, 0, "", nil, nil)
	b.Class(0x20, 0x10, "", node, nil)
	b.Class(0x30, 0x10, "", nil, nil)
	id := func(i int) uint64 { return 0x1000 + 16*uint64(i) }
	list := max(objects/10, 1)
	for i := range objects {
		if i%1000 == 999 {
			b.EndSegment()
			b.StartSegment(false)
		}
		switch {
		case i < list: // the list, each element holding a random object
			next := uint64(0)
			if i+1 < list {
				next = id(i + 1)
			}
			b.Instance(id(i), 0x20, next, id(list+r.IntN(max(objects-list, 1))), 0)
		case i%7 == 0:
			b.PrimArray(id(i), hprof.TypeByte, r.IntN(100))
		case i%11 == 0:
			elems := make([]uint64, r.IntN(8))
			for k := range elems {
				elems[k] = id(r.IntN(objects))
			}
			b.ObjArray(id(i), 0x30, elems...)
		default: // a node reaching the next, one before it (cycles) and any other
			b.Instance(id(i), 0x20, id((i+1)%objects), id(list+r.IntN(i-list+1)), id(r.IntN(objects)))
		}
	}
	b.Root(hprof.TagRootJNIGlobal, id(0))
	b.Root(hprof.TagRootJNIGlobal, id(list))
	b.EndSegment()
	b.EndDump()
	return b.Bytes()
}
