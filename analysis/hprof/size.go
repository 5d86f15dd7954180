package hprof

import (
	"fmt"
	"sort"
)

// Model is the shallow-size model: how many bytes HotSpot spends on an object of a given shape.
// An HPROF file records field values, not the in-memory layout, so sizes are reconstructed:
//
//   - 32-bit VM (4-byte identifiers): 8-byte object header, 4-byte references, array elements
//     start at 12 (16 for long/double arrays).
//   - 64-bit VM with compressed references (the default below 32 GB of heap): 12-byte object header
//     (8-byte mark word + 4-byte compressed class pointer), 4-byte references, array elements start
//     at 16 (header + 4-byte length).
//   - 64-bit VM without compressed references: 16-byte header, 8-byte references, array
//     elements start at 24 (the length word padded to 8, as HotSpot up to JDK 21 lays arrays out).
//   - Other 64-bit layouts (compact object headers, uncompressed references with compressed class
//     pointers, uncompressed class pointers, JDK 22's array layout, 16-byte alignment) are among
//     the candidates InferModel chooses from by the dump's address gaps (see layout.go).
//   - Every object is padded to a multiple of 8 bytes (ObjectAlignmentInBytes' default).
//   - Instance fields are placed as HotSpot's field layout (JDK 15 and later) places them:
//     superclass fields first; then, for each class, primitive fields by decreasing size and then
//     reference fields, each on its own at its natural alignment in the smallest gap that holds
//     it (gaps left in the superclasses' layout included; of equal gaps the highest), or else at
//     the end. The instance size is the end of the last field rounded up to 8.
//
// Where no gap is left over, this equals the rule Eclipse MAT applies (header + the sum of the
// field sizes, rounded up to 8); where HotSpot must leave padding (a class whose only field is a
// long) it gives HotSpot's real size, which jcmd GC.class_histogram reports. Fields the VM injects
// without declaring them (e.g. java.lang.Class's klass pointer) are not in the dump and cannot be
// counted; java.lang.Class objects are sized as a Class instance plus the class's static fields.
type Model struct {
	IDSize      int
	Compressed  bool // compressed references (and class pointers) assumed
	RefSize     int
	Header      int // bytes before the first instance field
	ArrayHeader int // bytes before the first array element (8-byte elements may start later)
	Align       int
}

// ModelFor returns the size model for a dump with the given identifier size; compressed says
// whether a 64-bit VM used compressed references.
func ModelFor(idSize int, compressed bool) Model {
	if idSize == 4 {
		return Model{IDSize: 4, Compressed: false, RefSize: 4, Header: 8, ArrayHeader: 12, Align: 8}
	}
	if compressed {
		return Model{IDSize: 8, Compressed: true, RefSize: 4, Header: 12, ArrayHeader: 16, Align: 8}
	}
	return Model{IDSize: 8, Compressed: false, RefSize: 8, Header: 16, ArrayHeader: 24, Align: 8}
}

// String describes the model as the reports print it.
func (m Model) String() string {
	refs := "uncompressed"
	if m.Compressed {
		refs = "compressed"
	}
	return fmt.Sprintf("%d-byte ids, %s references (%d bytes), %d-byte object header, %d-byte array header, %d-byte alignment",
		m.IDSize, refs, m.RefSize, m.Header, m.ArrayHeader, m.Align)
}

// CompressedRefLimit is the largest heap for which HotSpot uses compressed references by default.
const CompressedRefLimit = 32 << 30

// InferCompressed guesses whether a 64-bit dump came from a VM using compressed references.
// HotSpot writes every reference as a full 8-byte address and says nothing about the in-memory
// form, so the rule is: object ids are addresses; if all objects lie within a 32 GB span the heap
// was small enough for compressed references, which HotSpot then enables by default, so assume
// them. The guess is wrong only for a VM run with -XX:-UseCompressedOops on a small heap; callers
// offer an override for that case.
func InferCompressed(idSize int, minID, maxID uint64) bool {
	if idSize != 8 {
		return false
	}
	return maxID < minID || maxID-minID < CompressedRefLimit
}

func alignUp(n, a int64) int64 { return (n + a - 1) &^ (a - 1) }

// ArraySize returns the shallow size of an array of n elements of elemSize bytes each.
func (m Model) ArraySize(elemSize int, n uint32) uint64 {
	base := int64(m.ArrayHeader)
	if elemSize == 8 {
		base = alignUp(base, 8)
	}
	return uint64(alignUp(base+int64(elemSize)*int64(n), int64(m.Align)))
}

// ObjArraySize returns the shallow size of an object array of n elements.
func (m Model) ObjArraySize(n uint32) uint64 { return m.ArraySize(m.RefSize, n) }

// PrimArraySize returns the shallow size of a primitive array of n elements of type t.
func (m Model) PrimArraySize(t Type, n uint32) uint64 { return m.ArraySize(t.Size(m.IDSize), n) }

// Layout is the field layout of a class as far as sizes are concerned: the gaps still free below
// End, in offset order, and the end of the last field.
type Layout struct {
	Gaps [][2]int32 // [start, end)
	End  int32
}

// RootLayout returns the layout of java.lang.Object: just the header.
func (m Model) RootLayout() Layout { return Layout{End: int32(m.Header)} }

// Extend returns the layout of a class with the given declared instance fields whose
// superclass has layout super. As HotSpot's field layout builder (JDK 15 on) does, the primitive
// fields go first, by decreasing size, then the references in their declared order, each on
// its own: at its natural alignment in the smallest gap that holds it (of equal gaps the
// highest), or else at the end.
func (m Model) Extend(super Layout, fields []Field) Layout {
	l := Layout{Gaps: append([][2]int32(nil), super.Gaps...), End: super.End}
	var prims []int32
	refs := 0
	for _, f := range fields {
		if f.Type == TypeObject {
			refs++
		} else if s := f.Type.Size(m.IDSize); s > 0 {
			prims = append(prims, int32(s))
		}
	}
	sort.Slice(prims, func(i, j int) bool { return prims[i] > prims[j] })
	for _, s := range prims {
		l.place(s)
	}
	for ; refs > 0; refs-- {
		l.place(int32(m.RefSize))
	}
	return l
}

// place puts a field of size bytes, aligned to its size, into the smallest gap that holds it
// (searching from the highest, as HotSpot does, so that of equal gaps the highest wins), or at
// the end.
func (l *Layout) place(size int32) {
	best := -1
	for i := len(l.Gaps) - 1; i >= 0; i-- {
		g := l.Gaps[i]
		at := (g[0] + size - 1) / size * size
		if at+size <= g[1] && (best < 0 || g[1]-g[0] < l.Gaps[best][1]-l.Gaps[best][0]) {
			best = i
		}
	}
	if best < 0 {
		at := (l.End + size - 1) / size * size
		if at > l.End {
			l.Gaps = append(l.Gaps, [2]int32{l.End, at})
		}
		l.End = at + size
		return
	}
	g := l.Gaps[best]
	at := (g[0] + size - 1) / size * size
	var repl [][2]int32
	if at > g[0] {
		repl = append(repl, [2]int32{g[0], at})
	}
	if at+size < g[1] {
		repl = append(repl, [2]int32{at + size, g[1]})
	}
	l.Gaps = append(l.Gaps[:best], append(repl, l.Gaps[best+1:]...)...)
}

// InstanceSize returns the shallow size of an instance with this layout.
func (m Model) InstanceSize(l Layout) uint64 {
	return uint64(alignUp(int64(l.End), int64(m.Align)))
}
