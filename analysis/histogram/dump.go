package histogram

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/heapledger/heapledger/analysis/hprof"
)

// arrays accumulates the arrays of one class by their length modulo 16, which with the sums of
// their lengths gives their total size under any layout (see bytes): which layout the dump has is
// known only once every object has been seen.
type arrays struct {
	n, sum [16]uint64
}

func (a *arrays) add(n uint32) {
	a.n[n&15]++
	a.sum[n&15] += uint64(n)
}

func (a *arrays) merge(o *arrays) {
	for b := range a.n {
		a.n[b] += o.n[b]
		a.sum[b] += o.sum[b]
	}
}

func (a *arrays) count() uint64 {
	var c uint64
	for _, n := range a.n {
		c += n
	}
	return c
}

// bytes is the total size of the arrays under m, with elements of elemSize bytes. An array of
// 16k+b elements takes elemSize*16k bytes more than one of b elements (16k elements fill whole
// 16-byte units, and every layout aligns objects to 8 or 16 bytes).
func (a *arrays) bytes(m hprof.Model, elemSize int) uint64 {
	var total uint64
	for b, n := range a.n {
		if n > 0 {
			total += uint64(elemSize)*(a.sum[b]-uint64(b)*n) + n*m.ArraySize(elemSize, uint32(b))
		}
	}
	return total
}

// tally accumulates the objects of one heap dump, or of the part of it one worker reads.
type tally struct {
	counts  idCounts           // class id → instance count
	arrays  map[uint64]*arrays // object-array class id → arrays
	prims   [16]arrays
	classes uint64
	minID   uint64
	maxID   uint64
	votes   hprof.LayoutVotes
	// addClass takes CLASS DUMP records: straight into the schema when reading in file order,
	// kept aside by parallel workers.
	addClass func(*hprof.Record) error
	primSize [16]uint8 // element size by primitive type, 0 for the rest
}

func newTally(idSize int, addClass func(*hprof.Record) error) *tally {
	t := &tally{arrays: map[uint64]*arrays{}, minID: ^uint64(0), addClass: addClass}
	for e := range 16 {
		if ty := hprof.Type(e); ty != hprof.TypeObject {
			t.primSize[e] = uint8(ty.Size(idSize))
		}
	}
	return t
}

func (t *tally) add(rec *hprof.Record) error {
	switch rec.Tag {
	case hprof.TagInstanceDump, hprof.TagObjArrayDump, hprof.TagPrimArrayDump, hprof.TagClassDump:
		t.minID = min(t.minID, rec.ID)
		t.maxID = max(t.maxID, rec.ID)
	}
	switch rec.Tag {
	case hprof.TagInstanceDump:
		t.votes.Object(rec.ID)
		t.counts.inc(rec.Class)
	case hprof.TagObjArrayDump:
		t.votes.Array(rec.ID, rec.Length, 0)
		a := t.arrays[rec.Class]
		if a == nil {
			a = &arrays{}
			t.arrays[rec.Class] = a
		}
		a.add(rec.Length)
	case hprof.TagPrimArrayDump:
		t.votes.Array(rec.ID, rec.Length, int(t.primSize[rec.Elem&15]))
		t.prims[rec.Elem&15].add(rec.Length)
	case hprof.TagClassDump:
		t.votes.Object(rec.ID)
		t.classes++
		return t.addClass(rec)
	}
	return nil
}

// segment counts the records of one segment read by r: most straight from its buffer (records),
// the rest through Next.
func (t *tally) segment(r *hprof.Reader) error {
	t.votes.Break() // a worker's previous segment may lie anywhere
	for {
		if n := t.records(r.Buffered()); n > 0 {
			r.Consume(n)
			continue
		}
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := t.add(rec); err != nil {
			return err
		}
	}
}

// records counts the instance dumps and primitive arrays that lie wholly in b (a segment's
// buffered bytes, hprof.Reader.Buffered, 8-byte ids) from its start, and returns how many bytes
// they take; it stops at any other record, which Reader.Next then decodes. It decodes the two
// sub-records itself rather than taking batches of hprof.Reader.Headers: a store and a load of
// every header were a large share of this loop's cost.
func (t *tally) records(b []byte) int {
	p := 0
	lo, hi := t.minID, t.maxID
loop:
	for p+hprof.FastHead <= len(b) {
		x := (*[hprof.FastHead]byte)(b[p:])                       // one bounds check for every field
		id := binary.BigEndian.Uint64(x[hprof.InstanceID.At(8):]) // where PrimArrayID is too
		var end int
		switch x[0] {
		case hprof.InstanceDumpByte:
			end = p + hprof.InstanceFields.At(8) + int(binary.BigEndian.Uint32(x[hprof.InstanceFieldBytes.At(8):]))
			if end > len(b) || end < p { // end < p: overflow where int has 32 bits
				break loop
			}
			t.votes.Object(id)
			t.counts.inc(binary.BigEndian.Uint64(x[hprof.InstanceClass.At(8):]))
		case hprof.PrimArrayDumpByte:
			e, n := x[hprof.PrimArrayType.At(8)], binary.BigEndian.Uint32(x[hprof.PrimArrayLength.At(8):])
			size := t.primSize[e&15]
			end = p + hprof.PrimArrayElems.At(8) + int(n)*int(size)
			if size == 0 || e > 15 || end > len(b) || end < p {
				break loop
			}
			t.votes.Array(id, n, int(size))
			t.prims[e].add(n)
		default:
			break loop
		}
		lo, hi = min(lo, id), max(hi, id)
		p = end
	}
	t.minID, t.maxID = lo, hi
	return p
}

// merge adds o's objects to t.
func (t *tally) merge(o *tally) {
	o.counts.each(func(id, n uint64) { t.counts.add(id, n) })
	for id, a := range o.arrays {
		if b := t.arrays[id]; b != nil {
			b.merge(a)
		} else {
			t.arrays[id] = a
		}
	}
	for i := range o.prims {
		t.prims[i].merge(&o.prims[i])
	}
	t.votes.Add(&o.votes)
	t.classes += o.classes
	t.minID, t.maxID = min(t.minID, o.minID), max(t.maxID, o.maxID)
}

// FromDump computes the histogram of a heap dump read from r (path names it in messages) in one
// streaming pass. Instances are sized by their class's layout (hprof.Model), arrays by length,
// class objects as java.lang.Class instances plus their static fields. An uncompressed file is
// read by segments on all cores (see fromSegments).
func FromDump(path string, r io.Reader, opt Options) (*Histogram, error) {
	if f, ok := r.(*os.File); ok {
		if h, ok := fromSegments(path, f, opt); ok {
			return h, nil
		}
	}
	rd, err := hprof.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rd.SkipPrimitiveData = true
	var total int64 = -1
	if f, ok := r.(*os.File); ok && !rd.Gzip {
		if st, err := f.Stat(); err == nil {
			total = st.Size()
		}
	}
	h := &Histogram{Source: path, Format: "hprof"}
	schema := hprof.NewSchema(rd.IDSize)
	var t *tally
	cur := 0
	reset := func() {
		t = newTally(rd.IDSize, schema.Add)
		schema.Reset()
	}
	reset()
	var lastProgress int64
	lastSeg := int64(-1)
	others := hprof.OtherDumps{Want: opt.Dump}
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil && others.Skip(rd, err) {
			continue
		}
		if err != nil {
			if hprof.Truncated(err) && opt.AllowPartial {
				h.Partial = true
				h.Warnings = append(h.Warnings, fmt.Sprintf("partial: %v", err))
				break
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if opt.Progress != nil && rd.Offset()-lastProgress >= 16<<20 {
			lastProgress = rd.Offset()
			opt.Progress(lastProgress, total)
		}
		// A dump starts with its first segment, which may hold no record at all (an empty dump).
		if rec.Dump != 0 && rec.Dump != cur {
			if opt.Dump != 0 && cur == opt.Dump {
				// The chosen dump is complete; count the rest without reading them.
				if _, err := rd.CountDumps(); err != nil && !(hprof.Truncated(err) && opt.AllowPartial) {
					return nil, fmt.Errorf("%s: after dump %d: %w", path, opt.Dump, err)
				}
				break
			}
			cur = rec.Dump
			if opt.Dump == 0 {
				reset()
			}
			others.Started(cur)
		}
		if rec.Tag&hprof.SubTag == 0 {
			if rec.Tag == hprof.TagUTF8 || rec.Tag == hprof.TagLoadClass {
				if err := schema.Add(rec); err != nil {
					return nil, fmt.Errorf("%s: %w", path, err)
				}
			}
			continue
		}
		if opt.Dump != 0 && rec.Dump != opt.Dump {
			continue
		}
		// The size model's votes stop at segment boundaries, as where workers read by segments.
		if seg := rd.Segment(); seg != lastSeg {
			t.votes.Break()
			lastSeg = seg
		}
		if err := t.add(rec); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		// The rest of this segment that is buffered belongs to the same dump.
		rd.Consume(t.records(rd.Buffered()))
	}
	if err := others.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	h.Dumps = rd.Dumps()
	h.DumpIndex = opt.Dump
	if h.DumpIndex == 0 {
		h.DumpIndex = cur
	}
	if err := h.finishDump(path, t, schema, rd.IDSize, opt); err != nil {
		return nil, err
	}
	return h, nil
}

// finishDump sizes what t counted and fills in h's entries.
func (h *Histogram) finishDump(path string, t *tally, schema *hprof.Schema, idSize int, opt Options) error {
	if h.Dumps == 0 {
		return fmt.Errorf("%s: no heap dump records (HEAP DUMP or HEAP DUMP SEGMENT) in the file", path)
	}
	if opt.Dump > h.Dumps {
		return fmt.Errorf("%s: has %d heap dump(s), dump %d was asked for", path, h.Dumps, opt.Dump)
	}
	var m hprof.Model
	from := "layout set by --compressed"
	switch opt.Compressed {
	case "on", "off":
		m = hprof.ModelFor(idSize, opt.Compressed == "on")
	case "", "auto":
		m, from = hprof.InferModel(idSize, t.minID, t.maxID, &t.votes)
	default:
		return fmt.Errorf("compressed-references setting %q (want auto, on or off)", opt.Compressed)
	}
	h.Model = m.String() + ", " + from

	byName := make(map[string]*Entry, t.counts.used+len(t.arrays)+len(t.prims)+1)
	add := func(name string, n, b uint64) {
		e := byName[name]
		if e == nil {
			e = &Entry{Class: name}
			byName[name] = e
		}
		e.Instances += n
		e.Bytes += b
	}
	noLayout := 0
	layout := schema.Layouts(m)
	t.counts.each(func(id, n uint64) {
		name := schema.Name(id)
		lay, ok := layout(id)
		if !ok {
			noLayout++
			lay = m.RootLayout()
		}
		add(name, n, n*m.InstanceSize(lay))
	})
	if noLayout > 0 {
		h.Warnings = append(h.Warnings, fmt.Sprintf("%d class(es) with instances have no CLASS DUMP; their instances are sized as bare objects", noLayout))
	}
	for id, a := range t.arrays {
		add(schema.Name(id), a.count(), a.bytes(m, m.RefSize))
	}
	for e := range t.prims {
		if n := t.prims[e].count(); n > 0 {
			add(hprof.Type(e).ArrayName(), n, t.prims[e].bytes(m, int(t.primSize[e])))
		}
	}
	if t.classes > 0 {
		var classSize uint64
		if id, ok := schema.ClassIDByName("java.lang.Class"); ok {
			if lay, ok := layout(id); ok {
				classSize = m.InstanceSize(lay)
			}
		}
		if classSize == 0 {
			classSize = uint64(m.Header)
		}
		var b uint64
		for _, c := range schema.Classes {
			if c.Dump != nil {
				b += (classSize + m.StaticBytes(c.Dump) + uint64(m.Align) - 1) &^ uint64(m.Align-1)
			}
		}
		add("java.lang.Class", t.classes, b)
	}
	for _, e := range byName {
		h.Entries = append(h.Entries, *e)
	}
	h.finish()
	return nil
}

// idCounts counts by class id in an open-addressing table: the histogram's inner loop looks one
// up per instance, and a dump has thousands of classes, so the table stays in cache where a Go
// map's lookup costs several times more.
type idCounts struct {
	keys, vals []uint64 // key 0 marks a free slot; id 0 is counted in zero
	used       int
	zero       uint64
	// The slot of the id counted last: a dump lists objects in heap order, where objects of a
	// class often lie side by side, and one compare is cheaper than hashing and probing.
	last     uint64
	lastSlot int
	lastOK   bool
	// The class counted before last: objects of two classes often alternate (a map's entries and
	// their keys). Checking it shortens the histogram's loop.
	prev     uint64
	prevSlot int
	prevOK   bool
}

func (c *idCounts) inc(id uint64) {
	if id == c.last && c.lastOK {
		c.vals[c.lastSlot]++
		return
	}
	if id == c.prev && c.prevOK {
		c.vals[c.prevSlot]++
		c.last, c.prev, c.lastSlot, c.prevSlot = c.prev, c.last, c.prevSlot, c.lastSlot
		return
	}
	c.prev, c.prevSlot, c.prevOK = c.last, c.lastSlot, c.lastOK
	c.add(id, 1)
}

func (c *idCounts) add(id, n uint64) {
	if id == 0 {
		c.zero += n
		return
	}
	if 2*(c.used+1) > len(c.keys) {
		c.grow()
	}
	mask := uint64(len(c.keys) - 1)
	// Ids are 8-byte aligned addresses: multiply so that the low bits of the slot vary.
	for i := (id * 0x9E3779B97F4A7C15 >> 20) & mask; ; i = (i + 1) & mask {
		switch c.keys[i] {
		case id:
			c.vals[i] += n
			c.last, c.lastSlot, c.lastOK = id, int(i), true
			return
		case 0:
			c.keys[i], c.vals[i] = id, n
			c.used++
			c.last, c.lastSlot, c.lastOK = id, int(i), true
			return
		}
	}
}

func (c *idCounts) grow() {
	keys, vals := c.keys, c.vals
	size := max(1024, 2*len(keys))
	c.keys, c.vals, c.used, c.lastOK, c.prevOK = make([]uint64, size), make([]uint64, size), 0, false, false
	for i, k := range keys {
		if k != 0 {
			c.add(k, vals[i])
		}
	}
}

// each calls fn for every id counted, in no particular order.
func (c *idCounts) each(fn func(id, n uint64)) {
	if c.zero > 0 {
		fn(0, c.zero)
	}
	for i, k := range c.keys {
		if k != 0 {
			fn(k, c.vals[i])
		}
	}
}
