package hprof

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// Schema collects what a dump says about classes: names (UTF8 + LOAD CLASS) and layouts
// (CLASS DUMP). Feed it every record with Add; it keeps only the few records it needs.
type Schema struct {
	IDSize  int
	Strings map[uint64]string
	Classes map[uint64]*Class // by class object id
	names   map[uint64]uint64 // class object id → name string id, from LOAD CLASS
}

// nameReadBuf is the buffer TakeNames reads the symbol records through.
const nameReadBuf = 128 << 10

// TakeNames reads the strings that name a class (LOAD CLASS records Add has seen) or a field or
// static field of a CLASS DUMP it holds — those Prune keeps — from the UTF8 records of ra (the
// file, whose identifiers are IDSize bytes) that lie in spans, and adds them to the string
// table. It is for a reader that indexed the file with SkipUTF8: a dump's tens of thousands of
// symbols would each cost a string and a map entry, and even noting where each one is cost more,
// in fresh memory, than walking their records a second time here. A histogram takes class names
// only, before it has class dumps; a heap graph takes field names too, after.
func (s *Schema) TakeNames(ra io.ReaderAt, spans []Span) error {
	var ids []uint64
	for _, nid := range s.names {
		ids = append(ids, nid)
	}
	for _, c := range s.Classes {
		if c.Dump == nil {
			continue
		}
		for _, f := range c.Dump.Fields {
			ids = append(ids, f.NameID)
		}
		for _, st := range c.Dump.Statics {
			ids = append(ids, st.NameID)
		}
	}
	// The set of wanted ids is open addressing on a table four times their number: it is asked
	// once per symbol, too often for a map's lookups to be cheap.
	size := 16
	for size < 4*len(ids) {
		size *= 2
	}
	want, mask := make([]uint64, size), uint64(size-1)
	slot := func(id uint64) uint64 {
		i := (id * 0x9E3779B97F4A7C15 >> 32) & mask
		for want[i] != id && want[i] != 0 {
			i = (i + 1) & mask
		}
		return i
	}
	wantZero := false // id 0 marks a free slot
	for _, nid := range ids {
		if nid == 0 {
			wantZero = true
		} else {
			want[slot(nid)] = nid
		}
	}
	id := s.IDSize
	buf := make([]byte, nameReadBuf)
	// The names found go into one string, the table's entries slices of it: a string each, and
	// the table grown a few entries at a time, were a large share of this function's time.
	type found struct {
		sid      uint64
		from, to int
	}
	var names []byte
	var hits []found
	for _, sp := range spans {
		// b holds the file from at on; a record is taken while whole in it, and the rest moves
		// to the front of buf before the next read.
		b := buf[:0]
		for at := sp.Offset; at < sp.End; {
			for len(b) < utf8Chars.At(id) || recordLen(b) > int64(len(b)) {
				need := int64(utf8Chars.At(id))
				if len(b) >= headerLen {
					need = recordLen(b)
				}
				if need > sp.End-at {
					return &FormatError{Offset: at, Record: "UTF8", Msg: "record runs past the symbols indexed"}
				}
				if need > int64(cap(buf)) {
					buf = make([]byte, need)
				}
				k := copy(buf, b)
				m := int(min(int64(cap(buf)), sp.End-at))
				if _, err := ra.ReadAt(buf[k:m], at+int64(k)); err != nil {
					return &FormatError{Offset: at + int64(k), Record: "UTF8", Msg: fmt.Sprintf("cannot read the names again: %v", err)}
				}
				b = buf[:m]
			}
			if Tag(b[0]) != TagUTF8 {
				return &FormatError{Offset: at, Record: "UTF8", Msg: fmt.Sprintf("found a %v record where the index had symbols", Tag(b[0]))}
			}
			n := int(recordLen(b))
			if n < utf8Chars.At(id) {
				return &FormatError{Offset: at, Record: "UTF8", Msg: fmt.Sprintf("body of %d bytes is shorter than its %d-byte id", n-headerLen, id)}
			}
			var sid uint64
			if id == 4 {
				sid = uint64(binary.BigEndian.Uint32(b[utf8ID.At(id):]))
			} else {
				sid = binary.BigEndian.Uint64(b[utf8ID.At(id):])
			}
			if sid == 0 && wantZero || sid != 0 && want[slot(sid)] == sid {
				hits = append(hits, found{sid, len(names), len(names) + n - utf8Chars.At(id)})
				names = append(names, b[utf8Chars.At(id):n]...)
			}
			b, at = b[n:], at+int64(n)
		}
	}
	all := string(names)
	if len(s.Strings) == 0 {
		s.Strings = make(map[uint64]string, len(hits))
	}
	for _, h := range hits {
		s.Strings[h.sid] = all[h.from:h.to]
	}
	return nil
}

// Class is one class as the dump describes it.
type Class struct {
	ID   uint64
	Dump *ClassDump // nil if the dump has a LOAD CLASS but no CLASS DUMP for it

	resolved bool
	refs     []FieldRef
	dataLen  int32
	ok       bool // layout known: this class and all its superclasses have CLASS DUMPs
}

// FieldRef is a reference-typed instance field: where its value sits in an INSTANCE DUMP's data
// (which holds this class's fields first, then each superclass's), and its name.
type FieldRef struct {
	Offset   int32
	NameID   uint64
	Declarer uint64 // class id of the declaring class
}

// NewSchema returns an empty schema for identifiers of idSize bytes.
func NewSchema(idSize int) *Schema {
	return &Schema{IDSize: idSize, Strings: map[uint64]string{}, Classes: map[uint64]*Class{}, names: map[uint64]uint64{}}
}

// Add records what rec says about classes. CLASS DUMP bodies are decoded and kept.
func (s *Schema) Add(rec *Record) error {
	switch rec.Tag {
	case TagUTF8:
		s.Strings[rec.ID] = string(rec.Data)
	case TagLoadClass:
		s.names[rec.ID] = rec.NameID
	case TagClassDump:
		cd, err := DecodeClassDump(rec.ID, rec.Data, s.IDSize, rec.Offset)
		if err != nil {
			return err
		}
		s.AddClassDump(cd)
	}
	return nil
}

// ExpectClasses sizes the class table for n classes while it is still empty, for a caller about
// to add that many class dumps at once: grown as they come, the table of a dump with thousands of
// classes was copied again and again.
func (s *Schema) ExpectClasses(n int) {
	if len(s.Classes) == 0 {
		s.Classes = make(map[uint64]*Class, n)
	}
}

// AddClassDump is Add for a CLASS DUMP already decoded (DecodeClassDump, with this schema's id
// size): a reader that meets them on several cores decodes them there.
func (s *Schema) AddClassDump(cd *ClassDump) {
	c := s.class(cd.ID)
	c.Dump = cd
	c.resolved = false
}

func (s *Schema) class(id uint64) *Class {
	c := s.Classes[id]
	if c == nil {
		c = &Class{ID: id}
		s.Classes[id] = c
	}
	return c
}

// Prune forgets the strings that name no class and no field of a CLASS DUMP seen so far: a
// dump's UTF8 records hold every symbol of the JVM (methods, signatures, constants), megabytes
// that a reader of the heap needs none of once the classes are in.
func (s *Schema) Prune() {
	keep := make(map[uint64]string, len(s.names))
	take := func(id uint64) {
		if str, ok := s.Strings[id]; ok {
			keep[id] = str
		}
	}
	for _, nid := range s.names {
		take(nid)
	}
	for _, c := range s.Classes {
		if c.Dump == nil {
			continue
		}
		for _, f := range c.Dump.Fields {
			take(f.NameID)
		}
		for _, st := range c.Dump.Statics {
			take(st.NameID)
		}
	}
	s.Strings = keep
}

// Reset forgets CLASS DUMPs (when a later heap dump in the same file replaces an earlier one);
// names from LOAD CLASS records are kept, as they are file-wide.
func (s *Schema) Reset() { s.Classes = map[uint64]*Class{} }

// Name returns the Java name of class id ("java.lang.String", "int[]", "java.lang.Object[][]"),
// or a placeholder naming the id when the dump does not name it.
func (s *Schema) Name(id uint64) string {
	if nid, ok := s.names[id]; ok {
		if n, ok := s.Strings[nid]; ok {
			return JavaName(n)
		}
	}
	return fmt.Sprintf("<unknown class 0x%x>", id)
}

// FieldName returns the name of a field from its name string id.
func (s *Schema) FieldName(nameID uint64) string {
	if n, ok := s.Strings[nameID]; ok {
		return n
	}
	return fmt.Sprintf("<field 0x%x>", nameID)
}

// ClassIDByName returns the id of a loaded class with the given Java name, if any.
func (s *Schema) ClassIDByName(name string) (uint64, bool) {
	for id, nid := range s.names {
		if n, ok := s.Strings[nid]; ok && isJavaName(n, name) {
			return id, true
		}
	}
	return 0, false
}

// isJavaName reports whether JavaName(n) is name, without building the Java name of every class
// it is asked about: a plain class name is compared byte by byte, '/' standing for '.'.
func isJavaName(n, name string) bool {
	if len(n) > 0 && n[0] == '[' {
		return JavaName(n) == name
	}
	if len(n) != len(name) {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c == '/' {
			c = '.'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// InstanceRefs returns the reference fields of instances of class id, and the length an
// instance's data must have. ok is false when the class or one of its superclasses has no
// CLASS DUMP (yet), so the layout is unknown.
func (s *Schema) InstanceRefs(id uint64) (refs []FieldRef, dataLen int32, ok bool) {
	c := s.Classes[id]
	if c == nil || c.Dump == nil {
		return nil, 0, false
	}
	if c.resolved {
		return c.refs, c.dataLen, c.ok
	}
	c.refs, c.dataLen, c.ok = nil, 0, false
	var off int32
	seen := 0
	for cur := c; ; {
		for _, f := range cur.Dump.Fields {
			if f.Type == TypeObject {
				c.refs = append(c.refs, FieldRef{Offset: off, NameID: f.NameID, Declarer: cur.ID})
			}
			off += int32(f.Type.Size(s.IDSize))
		}
		if cur.Dump.Super == 0 {
			c.ok = true
			break
		}
		next := s.Classes[cur.Dump.Super]
		if next == nil || next.Dump == nil {
			break
		}
		if seen++; seen > len(s.Classes) {
			// A cycle in corrupt superclass links: no layout, and no point trying again.
			c.resolved = true
			c.refs, c.dataLen = nil, 0
			return nil, 0, false
		}
		cur = next
	}
	c.dataLen = off
	// Only a complete answer is final: a superclass's CLASS DUMP may still come later in the file.
	c.resolved = c.ok
	return c.refs, c.dataLen, c.ok
}

// Layout computes the size layout of class id under model m, superclasses first. ok is false
// when a CLASS DUMP in the chain is missing. For many classes, Layouts.
func (s *Schema) Layout(m Model, id uint64) (Layout, bool) { return s.Layouts(m)(id) }

// Layouts returns Layout under model m as a function that keeps every class's layout it works
// out: asked for each class of a dump, Layout lays out the superclasses of each again, where
// this extends each superclass's layout once.
func (s *Schema) Layouts(m Model) func(id uint64) (Layout, bool) {
	type known struct {
		l  Layout
		ok bool
	}
	done := map[uint64]known{}
	var chain []uint64
	return func(id uint64) (Layout, bool) {
		// Up to a class laid out already, or to the root.
		chain = chain[:0]
		l, ok := m.RootLayout(), true
		for cur := id; cur != 0; {
			if k, found := done[cur]; found {
				l, ok = k.l, k.ok
				break
			}
			c := s.Classes[cur]
			if c == nil || c.Dump == nil || len(chain) > len(s.Classes) {
				ok = false // and for every class below it
				break
			}
			chain = append(chain, cur)
			cur = c.Dump.Super
		}
		for i := len(chain) - 1; i >= 0; i-- {
			if ok {
				l = m.Extend(l, s.Classes[chain[i]].Dump.Fields)
			}
			done[chain[i]] = known{l, ok}
		}
		if !ok {
			return Layout{}, false
		}
		return l, true
	}
}

// StaticBytes returns the bytes the static fields of class c occupy in its java.lang.Class
// mirror under model m.
func (m Model) StaticBytes(cd *ClassDump) uint64 {
	var n uint64
	for _, st := range cd.Statics {
		if st.Value.Type == TypeObject {
			n += uint64(m.RefSize)
		} else {
			n += uint64(st.Value.Type.Size(m.IDSize))
		}
	}
	return n
}

// JavaName turns a JVM internal class name ("java/lang/String", "[I", "[[Ljava/lang/Object;")
// into the Java form ("java.lang.String", "int[]", "java.lang.Object[][]"). Names already in
// Java form are returned unchanged apart from '/' → '.'.
func JavaName(n string) string {
	dims := 0
	for dims < len(n) && n[dims] == '[' {
		dims++
	}
	if dims == 0 {
		return strings.ReplaceAll(n, "/", ".")
	}
	elem := n[dims:]
	var base string
	switch {
	case len(elem) == 1:
		switch elem[0] {
		case 'Z':
			base = "boolean"
		case 'C':
			base = "char"
		case 'F':
			base = "float"
		case 'D':
			base = "double"
		case 'B':
			base = "byte"
		case 'S':
			base = "short"
		case 'I':
			base = "int"
		case 'J':
			base = "long"
		default:
			return n
		}
	case len(elem) > 2 && elem[0] == 'L' && elem[len(elem)-1] == ';':
		base = strings.ReplaceAll(elem[1:len(elem)-1], "/", ".")
	default:
		// Some dumpers name object arrays "[java.lang.Object" without the L…; form.
		base = strings.ReplaceAll(elem, "/", ".")
	}
	return base + strings.Repeat("[]", dims)
}
