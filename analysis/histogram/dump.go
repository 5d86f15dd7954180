package histogram

import (
	"fmt"
	"io"
	"os"

	"github.com/heapledger/heapledger/analysis/hprof"
)

// acc accumulates one class. Array bytes are summed under both candidate size models because
// which one applies is known only once every object id has been seen.
type acc struct {
	n      uint64
	bytesC uint64 // compressed references
	bytesU uint64 // uncompressed
}

// FromDump computes the histogram of a heap dump read from r (path names it in messages) in one
// streaming pass. Instances are sized by their class's layout (hprof.Model), arrays by length,
// class objects as java.lang.Class instances plus their static fields.
func FromDump(path string, r io.Reader, opt Options) (*Histogram, error) {
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
	mc, mu := hprof.ModelFor(rd.IDSize, true), hprof.ModelFor(rd.IDSize, false)
	h := &Histogram{Source: path, Format: "hprof"}
	schema := hprof.NewSchema(rd.IDSize)
	var (
		arrays  map[uint64]*acc // object-array class id → sizes
		prims   [16]acc
		classes uint64
		minID   = ^uint64(0)
		maxID   uint64
		cur     int
		lastCls uint64
		lastN   *uint64
	)
	counts := map[uint64]*uint64{} // class id → instance count
	reset := func() {
		arrays, prims, classes = map[uint64]*acc{}, [16]acc{}, 0
		minID, maxID, lastCls, lastN = ^uint64(0), 0, 0, nil
		schema.Reset()
	}
	reset()
	var lastProgress int64
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
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
		if rec.Tag&hprof.SubTag == 0 {
			if rec.Tag == hprof.TagUTF8 || rec.Tag == hprof.TagLoadClass {
				if err := schema.Add(rec); err != nil {
					return nil, fmt.Errorf("%s: %w", path, err)
				}
			}
			continue
		}
		if rec.Dump != cur {
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
				counts = map[uint64]*uint64{}
			}
		}
		if opt.Dump != 0 && rec.Dump != opt.Dump {
			continue
		}
		switch rec.Tag {
		case hprof.TagInstanceDump, hprof.TagObjArrayDump, hprof.TagPrimArrayDump, hprof.TagClassDump:
			minID = min(minID, rec.ID)
			maxID = max(maxID, rec.ID)
		}
		switch rec.Tag {
		case hprof.TagInstanceDump:
			// Instances of one class tend to come in runs; skip the map when they do.
			if rec.Class != lastCls || lastN == nil {
				p := counts[rec.Class]
				if p == nil {
					p = new(uint64)
					counts[rec.Class] = p
				}
				lastCls, lastN = rec.Class, p
			}
			*lastN++
		case hprof.TagObjArrayDump:
			a := arrays[rec.Class]
			if a == nil {
				a = &acc{}
				arrays[rec.Class] = a
			}
			a.n++
			a.bytesC += mc.ObjArraySize(rec.Length)
			a.bytesU += mu.ObjArraySize(rec.Length)
		case hprof.TagPrimArrayDump:
			a := &prims[rec.Elem&15]
			a.n++
			a.bytesC += mc.PrimArraySize(rec.Elem, rec.Length)
			a.bytesU += mu.PrimArraySize(rec.Elem, rec.Length)
		case hprof.TagClassDump:
			classes++
			if err := schema.Add(rec); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	h.Dumps = rd.Dumps()
	h.DumpIndex = opt.Dump
	if h.DumpIndex == 0 {
		h.DumpIndex = cur
	}
	if h.Dumps == 0 {
		return nil, fmt.Errorf("%s: no heap dump records (HEAP DUMP or HEAP DUMP SEGMENT) in the file", path)
	}
	if opt.Dump > h.Dumps {
		return nil, fmt.Errorf("%s: has %d heap dump(s), dump %d was asked for", path, h.Dumps, opt.Dump)
	}
	compressed := hprof.InferCompressed(rd.IDSize, minID, maxID)
	switch opt.Compressed {
	case "on":
		compressed = true
	case "off":
		compressed = false
	case "", "auto":
	default:
		return nil, fmt.Errorf("compressed-references setting %q (want auto, on or off)", opt.Compressed)
	}
	m := mu
	if compressed {
		m = mc
	}
	h.Model = describe(m)
	pick := func(a *acc) uint64 {
		if compressed {
			return a.bytesC
		}
		return a.bytesU
	}

	byName := map[string]*Entry{}
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
	for id, p := range counts {
		n := *p
		name := schema.Name(id)
		lay, ok := schema.Layout(m, id)
		if !ok {
			noLayout++
			lay = m.RootLayout()
		}
		add(name, n, n*m.InstanceSize(lay))
	}
	if noLayout > 0 {
		h.Warnings = append(h.Warnings, fmt.Sprintf("%d class(es) with instances have no CLASS DUMP; their instances are sized as bare objects", noLayout))
	}
	for id, a := range arrays {
		add(schema.Name(id), a.n, pick(a))
	}
	for t := range prims {
		if prims[t].n > 0 {
			add(hprof.Type(t).ArrayName(), prims[t].n, pick(&prims[t]))
		}
	}
	if classes > 0 {
		var classSize uint64
		if id, ok := schema.ClassIDByName("java.lang.Class"); ok {
			if lay, ok := schema.Layout(m, id); ok {
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
		add("java.lang.Class", classes, b)
	}
	for _, e := range byName {
		h.Entries = append(h.Entries, *e)
	}
	h.finish()
	return h, nil
}

func describe(m hprof.Model) string {
	refs := "uncompressed"
	if m.Compressed {
		refs = "compressed"
	}
	return fmt.Sprintf("%d-byte ids, %s references (%d bytes), %d-byte object header, %d-byte array header, %d-byte alignment",
		m.IDSize, refs, m.RefSize, m.Header, m.ArrayHeader, m.Align)
}
