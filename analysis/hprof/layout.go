package hprof

// A 64-bit HotSpot lays objects out in one of a few ways, and an HPROF file does not say which:
// compressed references or not, compressed class pointers or not, compact object headers (JDK 24
// on) or not, and array elements starting right after the length (JDK 22 on) or at the next
// 8-byte boundary (before). Object ids are addresses, though, and HotSpot dumps a heap region by
// walking it object by object, so the gap between an array and the object dumped right after it
// is, for most arrays, the array's size. An array's size depends on the layout alone (its header
// and element sizes), where an instance's would need its class's fields, so arrays are the
// witnesses: LayoutVotes counts, for each candidate layout, the arrays whose gap it predicts.

// layoutCandidates are the 64-bit layouts told apart, the default (compressed references and
// class pointers, 12-byte headers) first, each with objects aligned to 8 bytes (the default) and
// to 16 (-XX:ObjectAlignmentInBytes=16).
var layoutCandidates = func() []Model {
	var ms []Model
	for _, align := range []int{8, 16} {
		for _, m := range []Model{
			{Compressed: true, RefSize: 4, Header: 12, ArrayHeader: 16},
			{Compressed: true, RefSize: 4, Header: 8, ArrayHeader: 12},   // compact object headers (JDK 24 on)
			{Compressed: false, RefSize: 8, Header: 12, ArrayHeader: 16}, // -UseCompressedOops (JDK 15 on, or 32 GB of heap and more)
			{Compressed: false, RefSize: 8, Header: 16, ArrayHeader: 24}, // -UseCompressedOops before JDK 15; both off before JDK 22
			{Compressed: false, RefSize: 8, Header: 16, ArrayHeader: 20}, // both off, JDK 22 on
			{Compressed: true, RefSize: 4, Header: 16, ArrayHeader: 24},  // -UseCompressedClassPointers before JDK 22
			{Compressed: true, RefSize: 4, Header: 16, ArrayHeader: 20},  // -UseCompressedClassPointers, JDK 22 on
		} {
			m.IDSize, m.Align = 8, align
			ms = append(ms, m)
		}
	}
	return ms
}()

const numLayouts = 14 // len(layoutCandidates), checked by TestLayoutCandidates

// LayoutVotes collects the evidence for InferModel from a dump's objects in dump order. Its
// zero value is ready once Break has been called; a worker that reads part of a dump keeps its
// own and Adds it to the others. Only the first arraysPerSegment arrays after each Break vote, so
// that the evidence costs a reader of millions of objects next to nothing.
type LayoutVotes struct {
	// after[i] is where the object following the last array would start under layout i; armed
	// says an array was the last object.
	after [numLayouts]uint64
	armed bool
	left  int // arrays that may still vote before the next Break
	// votes counts the arrays by the set of layouts that predicted their gap (bit i: layout i):
	// many sizes are the same under two layouts, and only the others tell those apart.
	votes [1 << numLayouts]uint64
}

// arraysPerSegment is how many arrays vote per segment: HotSpot writes segments of about a
// megabyte, so a dump of a few megabytes already gets over a thousand votes.
const arraysPerSegment = 256

// Array notes an array at id with n elements of elemSize bytes, or of references when elemSize is
// 0, as the next object in dump order.
func (v *LayoutVotes) Array(id uint64, n uint32, elemSize int) {
	if v.left > 0 {
		v.array(id, n, elemSize)
	}
}

func (v *LayoutVotes) array(id uint64, n uint32, elemSize int) {
	v.left--
	if v.armed {
		v.vote(id)
	}
	for i, m := range layoutCandidates {
		es := elemSize
		if es == 0 {
			es = m.RefSize
		}
		v.after[i] = id + m.ArraySize(es, n)
	}
	v.armed = true
}

// Object notes that the next object in dump order is at id; an instance or a class then follows
// with Object too, an array with Array.
func (v *LayoutVotes) Object(id uint64) {
	if v.armed {
		v.vote(id)
	}
}

func (v *LayoutVotes) vote(id uint64) {
	set := 0
	for i, a := range v.after {
		if a == id {
			set |= 1 << i
		}
	}
	v.votes[set]++
	v.armed = false
}

// Break says that a segment starts: the next object need not follow the last one in the heap.
func (v *LayoutVotes) Break() { v.armed, v.left = false, arraysPerSegment }

// Add adds o's votes to v's.
func (v *LayoutVotes) Add(o *LayoutVotes) {
	for i := range v.votes {
		v.votes[i] += o.votes[i]
	}
}

// minLayoutVotes is how many arrays must agree with a layout, and how many must tell it apart
// from each other layout that they can, before InferModel trusts it.
const minLayoutVotes = 32

// InferModel returns the size model of a dump with the given identifier size, ids from minID to
// maxID and the layout votes gathered over its objects. A layout is taken when at least
// minLayoutVotes arrays agree with it and, against every other layout, the arrays whose size the
// two predict differently side with it at least four to one (and are at least minLayoutVotes/4)
// — or there are none such: two layouts that differ only in the size of references agree on
// every primitive array, and without object arrays to part them the id range does. Without a
// layout so taken, the model is HotSpot's default for the id range (InferCompressed). The second
// result says how the model was chosen, for the report.
func InferModel(idSize int, minID, maxID uint64, v *LayoutVotes) (Model, string) {
	guess := ModelFor(idSize, InferCompressed(idSize, minID, maxID))
	if idSize != 8 || v == nil {
		return guess, "layout by the id range"
	}
	// Few of the sets of layouts occur: only those are summed over.
	type seen struct {
		set   int
		count uint64
	}
	var sets []seen
	for set, k := range v.votes {
		if k > 0 && set != 0 {
			sets = append(sets, seen{set, k})
		}
	}
	// apart(b, c) counts the arrays that agree with layout b and not with c.
	apart := func(b, c int) uint64 {
		var n uint64
		for _, s := range sets {
			if s.set&(1<<b) != 0 && s.set&(1<<c) == 0 {
				n += s.count
			}
		}
		return n
	}
	var taken []int
	for b := range numLayouts {
		var agree uint64
		for _, s := range sets {
			if s.set&(1<<b) != 0 {
				agree += s.count
			}
		}
		ok := agree >= minLayoutVotes
		for c := range numLayouts {
			if c == b || !ok {
				continue
			}
			w, l := apart(b, c), apart(c, b)
			ok = (w == 0 && l == 0) || (w >= minLayoutVotes/4 && w >= 4*l)
		}
		if ok {
			taken = append(taken, b)
		}
	}
	switch len(taken) {
	case 1:
		return layoutCandidates[taken[0]], "layout by the address gaps after arrays"
	case 2:
		// Told apart by nothing: the id range decides the size of references.
		a, b := layoutCandidates[taken[0]], layoutCandidates[taken[1]]
		if a.Header == b.Header && a.ArrayHeader == b.ArrayHeader && a.Compressed != b.Compressed {
			if b.Compressed == guess.Compressed {
				a = b
			}
			return a, "layout by the address gaps after arrays and the id range"
		}
	}
	return guess, "layout by the id range"
}

// Layouts returns the 64-bit layouts InferModel chooses among.
func Layouts() []Model { return append([]Model(nil), layoutCandidates...) }
