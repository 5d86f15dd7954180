package heapdump

import (
	"cmp"
	"fmt"
	"io"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// prepare turns pass 1's file-order records into id-ordered nodes with sizes, resolves roots and
// lays out the successor array for pass 2. Its steps:
//  1. the object layout, set by --compressed or found from the ids and the arrays (chooseModel);
//  2. the classes: primitive arrays tied to their array classes, each class's name, superclass
//     and instance size (classTable), and which reference fields are weak (classifyReferences);
//  3. the nodes in id order (order), with a warning for ids that occur twice (warnDuplicates);
//  4. each node's size and, where pass 1 could only bound it, its out-degree (sizeNodes), while
//     the other core builds the id table;
//  5. class objects tied to the classes they represent (classObjects), and pass 2's starting
//     points (mainStarts);
//  6. the GC roots resolved to nodes, those of the super root's edges (resolveRoots);
//  7. the successor array laid out from the degrees (layoutEdges).
func (l *loader) prepare() {
	d := l.d
	l.chooseModel()
	remap, classKey := l.classTable()
	l.classifyReferences()
	l.order()
	l.warnDuplicates()

	// Sizes are kept in units of the alignment, four bytes a node instead of eight, and they
	// take the array of the array lengths they are computed from (each node's length is read
	// before its size is written).
	g := &heapgraph.Graph{Size: l.aux}
	if a := uint(d.Model.Align); a > 0 && a&(a-1) == 0 {
		g.SizeShift = uint8(bits.TrailingZeros(a))
	}
	l.aux = nil
	// The id table is built on the other core meanwhile: it reads only the ids.
	idsDone := make(chan struct{})
	go func() {
		d.ids = newObjectIDs(l.mem, l.ids)
		close(idsDone)
	}()
	l.sizeNodes(g, remap, classKey)
	d.Kind = l.kind
	l.classObjects(classKey)
	d.ClassOf = l.cls
	// Pass 2's starting points need only the kinds: worked out while the id table is still in
	// the making, rather than after this core has waited for it.
	if l.idx != nil { // pass 2 reads by segments (an indexed pass 1 that gave up leaves its own)
		l.startMain = l.mainStarts()
	}
	<-idsDone
	// The table holds what it needs of the ids (never their array): the array's memory goes
	// back to the system now, rather than at a collection.
	memory.Release(l.mem, l.ids)
	l.ids = nil
	l.layoutEdges(g, l.resolveRoots())
}

// chooseModel sets the dump's object layout: the one --compressed names, or the one the range
// of its object ids and the gaps after its arrays point to (hprof.InferModel).
func (l *loader) chooseModel() {
	d := l.d
	minID, maxID := ^uint64(0), uint64(0)
	if len(d.segIDs) > 0 {
		// Every object lies in one of the segments that pass 1 read, each with its ids' range.
		for _, s := range d.segIDs {
			minID, maxID = min(minID, s.lo), max(maxID, s.hi)
		}
	} else {
		for _, id := range l.ids[1:] {
			minID = min(minID, id)
			maxID = max(maxID, id)
		}
	}
	switch l.opt.Compressed {
	case "on", "off":
		d.Model, d.ModelFrom = hprof.ModelFor(l.d.IDSize, l.opt.Compressed == "on"), "layout set by --compressed"
	default:
		d.Model, d.ModelFrom = hprof.InferModel(l.d.IDSize, minID, maxID, &l.votes)
	}
}

// classTable makes d.Classes, a class per class key: its name, superclass and instance size.
// Primitive arrays carry no class id in HotSpot dumps; they are tied to the class object of
// their array type when the dump has one, as MAT does: remap takes pass 1's key of each
// primitive array type to that class's. classKey is java.lang.Class's key, the class of class
// objects, made up when the dump has none.
func (l *loader) classTable() (remap []uint32, classKey uint32) {
	d := l.d
	m := d.Model
	byName := map[string]uint64{}
	for id := range l.schema.Classes {
		byName[l.schema.Name(id)] = id
	}
	remap = make([]uint32, len(l.entries))
	for i := range remap {
		remap[i] = uint32(i)
	}
	for t, pk := range l.primKey {
		if pk < 0 {
			continue
		}
		id, ok := byName[hprof.Type(t).ArrayName()]
		if !ok {
			continue
		}
		if k, ok := l.keys[id]; ok {
			remap[pk] = k
		} else {
			l.entries[pk].id = id
			l.keys[id] = uint32(pk)
		}
	}
	classKey = uint32(len(l.entries))
	if id, ok := byName["java.lang.Class"]; ok {
		classKey = l.key(id)
	} else {
		l.entries = append(l.entries, classEntry{})
	}

	layout := l.schema.Layouts(m)
	d.Classes = make([]Class, len(l.entries))
	for k, e := range l.entries {
		c := &d.Classes[k]
		c.Super = -1
		c.ID = e.id
		switch {
		case e.id != 0:
			c.Name = l.schema.Name(e.id)
		case uint32(k) == classKey:
			c.Name = "java.lang.Class"
		default:
			c.Name = e.prim.ArrayName()
		}
		sc := l.schema.Classes[e.id]
		if sc == nil || sc.Dump == nil {
			continue
		}
		if sc.Dump.Super != 0 {
			c.Super = int32(l.key(sc.Dump.Super))
		}
		if lay, ok := layout(e.id); ok {
			c.InstanceSize = m.InstanceSize(lay)
		}
	}
	for len(d.Classes) < len(l.entries) { // l.key may have added superclasses seen only as supers
		k := len(d.Classes)
		d.Classes = append(d.Classes, Class{Super: -1, ID: l.entries[k].id, Name: l.schema.Name(l.entries[k].id)})
	}
	return remap, classKey
}

// warnDuplicates warns of object ids that occur more than once, once they are in order.
func (l *loader) warnDuplicates() {
	for i := 2; i < len(l.ids); i++ {
		if l.ids[i] == l.ids[i-1] {
			l.warn("dup", fmt.Sprintf("object id 0x%x occurs more than once; references reach only one of the records", l.ids[i]))
		}
	}
}

// sizeNodes sets each node's size in g, from its class's instance size or its array length (in
// g.Size until then), and the out-degrees pass 1 could only bound: an instance's reference
// fields and its class edge, worked out once per class. It gives primitive arrays their array
// class's key (remap).
func (l *loader) sizeNodes(g *heapgraph.Graph, remap []uint32, classKey uint32) {
	d, m, n := l.d, l.d.Model, len(l.kind)
	classSize := d.Classes[classKey].InstanceSize
	if classSize == 0 {
		classSize = uint64(m.Header)
	}
	refSlots := make([]uint32, len(d.Classes))
	for k := range refSlots {
		refSlots[k] = unresolved
	}
	for i := 1; i < n; i++ {
		var size uint64
		switch l.kind[i] {
		case KindInstance:
			c := &d.Classes[l.cls[i]]
			if c.InstanceSize == 0 {
				l.warn("layout"+c.Name, fmt.Sprintf("class %s has no CLASS DUMP (or a superclass lacks one): its instances are sized as bare objects and their fields are not followed", c.Name))
				c.InstanceSize = uint64(m.InstanceSize(m.RootLayout()))
			}
			size = c.InstanceSize
			if l.deg[i] == unresolved {
				k := l.cls[i]
				if refSlots[k] == unresolved {
					refs, _, ok := l.schema.InstanceRefs(l.entries[k].id)
					refSlots[k] = 1
					if ok {
						refSlots[k] += uint32(len(refs))
					}
				}
				l.deg[i] = refSlots[k]
			}
		case KindObjArray:
			size = m.ObjArraySize(g.Size[i])
		case KindPrimArray:
			size = m.PrimArraySize(l.entries[l.cls[i]].prim, g.Size[i])
			l.cls[i] = remap[l.cls[i]]
		case KindClass:
			cd := l.schema.Classes[l.entries[l.cls[i]].id].Dump
			size = uint64(m.Align-1+int(classSize+m.StaticBytes(cd))) &^ uint64(m.Align-1)
		}
		g.SetSize(uint32(i), size)
	}
	g.SetSize(0, 0)
}

// classObjects ties each class object to the class it represents, and gives it its own class,
// java.lang.Class. This needs no ids: it is done while the id table may still be in the making.
func (l *loader) classObjects(classKey uint32) {
	d := l.d
	d.classNode = map[uint32]int32{}
	for i := 1; i < len(l.kind); i++ {
		if l.kind[i] == KindClass {
			k := l.cls[i]
			d.classNode[uint32(i)] = int32(k)
			d.Classes[k].Node = uint32(i)
			l.cls[i] = classKey
		}
	}
}

// resolveRoots turns the GC-root records into d.Roots, every record kept, and returns the
// rooted nodes, each once: the super root's successors.
func (l *loader) resolveRoots() []uint32 {
	d := l.d
	missing := 0
	for _, r := range l.roots {
		node, ok := d.Node(r.id)
		if !ok {
			missing++
			continue
		}
		d.Roots = append(d.Roots, Root{Node: node, Kind: r.kind, Thread: r.thread, Frame: r.frame})
	}
	if missing > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d GC-root record(s) name objects that are not in the dump", missing))
	}
	slices.SortStableFunc(d.Roots, func(a, b Root) int { return cmp.Compare(a.Node, b.Node) })
	var rootNodes []uint32
	for i, r := range d.Roots {
		if i == 0 || r.Node != d.Roots[i-1].Node {
			rootNodes = append(rootNodes, r.Node)
		}
	}
	return rootNodes
}

// layoutEdges turns the out-degrees into g's CSR offsets and reserves the successor array that
// pass 2 fills, the super root's edges (rootNodes) written already. A graph with more edges
// than the offsets can count sets l.tooBig instead.
func (l *loader) layoutEdges(g *heapgraph.Graph, rootNodes []uint32) {
	d, n := l.d, len(l.kind)
	l.deg[0] = uint32(len(rootNodes))
	// Running sums turn the degrees into CSR offsets in place, on two cores for many nodes.
	l.deg = append(l.deg, 0)
	total := heapgraph.RunningSums(l.deg[:n], true)
	// Attaching unreachable objects to the super root (finish) adds an edge per object at most.
	extra := uint64(0)
	if l.opt.KeepUnreachable || len(d.Roots) == 0 {
		extra = uint64(n - 1)
	}
	if total+extra > maxEdges {
		l.tooBig = true
		return
	}
	l.deg[n] = uint32(total)
	g.Off = l.deg
	l.deg = nil
	// Names are all taken now but for fields' and statics', which reports of paths give.
	l.schema.Prune()
	// The successor array is written in pass 2, a segment's nodes' lists at a time, by the core
	// reading the segment: its pages are faulted in there, on both cores, rather than all here
	// on one first (on a virtual machine every fresh page is a costly fault).
	g.Succ = memory.Reserve[uint32](l.mem, int(total))
	d.Graph = g
	copy(g.Succ, rootNodes)
	d.Weak = make([]uint64, (total+63)/64)
}

// mainStarts returns, for each segment pass 1 read, the non-class node its count of them starts
// after (see filler.object).
func (l *loader) mainStarts() []uint32 {
	startMain := make([]uint32, len(l.segs))
	node, seen := uint32(0), uint32(0)
	for i, want := range l.segMain {
		for seen < want {
			node++
			if l.kind[node] != KindClass {
				seen++
			}
		}
		startMain[i] = node
	}
	return startMain
}

// classRecNode finds the node of a class dump record in pass 2: the first class node with its
// id (ids repeat only in corrupt dumps, which were warned about).
func (l *loader) classRecNode(id uint64, d *Dump) (uint32, bool) {
	n, ok := d.Node(id)
	if !ok {
		return 0, false
	}
	for int(n) < d.ids.n && d.ObjectID(n) == id {
		if d.Kind[n] == KindClass {
			return n, true
		}
		n++
	}
	return 0, false
}

// classifyReferences marks subclasses of java.lang.ref.Reference and remembers where their
// referent field sits.
func (l *loader) classifyReferences() {
	d := l.d
	kinds := map[string]RefKind{"java.lang.ref.WeakReference": RefWeak, "java.lang.ref.SoftReference": RefSoft,
		"java.lang.ref.PhantomReference": RefPhantom, "java.lang.ref.FinalReference": RefFinal, "java.lang.ref.Reference": RefOther}
	l.refClass = -1
	for k := range d.Classes {
		if d.Classes[k].Name == "java.lang.ref.Reference" {
			l.refClass = int32(k)
		}
	}
	for k := range d.Classes {
		kind := RefNone
		for c, steps := int32(k), 0; c >= 0 && steps < 1<<16; c, steps = d.Classes[c].Super, steps+1 {
			if rk, ok := kinds[d.Classes[c].Name]; ok {
				kind = rk
				if rk != RefOther {
					break
				}
			}
		}
		d.Classes[k].Ref = kind
	}
}

// pass2 fills the successor lists: in parallel by segments when pass 1 indexed the file,
// otherwise in one sequential read.
func (l *loader) pass2() error {
	d := l.d
	var classNode uint32 // java.lang.Class's own class object, the class of every class object
	if n := len(d.ClassOf); n > 1 {
		for i := 1; i < n; i++ {
			if d.Kind[i] == KindClass {
				classNode = d.Classes[d.ClassOf[i]].Node
				break
			}
		}
	}
	// Workers share the layouts read-only, by class key: Schema.InstanceRefs memoises, so it is
	// asked once here, and an instance's key is at hand in its node's class.
	refs := make([][]hprof.FieldRef, len(d.Classes))
	for k, c := range d.Classes {
		if c.ID != 0 {
			refs[k], _, _ = l.schema.InstanceRefs(c.ID)
		}
	}
	var fills []*filler
	watch := l.watchLayouts()
	newFiller := func() *filler {
		fl := &filler{l: l, d: d, refs: refs, watch: watch, classNode: classNode, idSize: d.IDSize}
		fills = append(fills, fl)
		return fl
	}
	nObj := d.ids.n - 1
	var k int
	var err error
	if l.idx != nil {
		k, err = l.pass2Indexed(newFiller)
	} else {
		k, err = l.pass2Sequential(newFiller())
	}
	if err != nil {
		return err
	}
	// Warnings in file order, as one sequential read would have given them.
	var short []fillWarning
	dangling := 0
	var first, most fillWarning
	mostN, mostTag := 0, hprof.Tag(0)
	for _, fl := range fills {
		short = append(short, fl.short...)
		if fl.dangling > 0 && (dangling == 0 || fl.firstDangling.off < first.off) {
			first = fl.firstDangling
		}
		if fl.most > mostN || fl.most == mostN && mostN > 0 && fl.mostAt.off < most.off {
			most, mostN, mostTag = fl.mostAt, fl.most, fl.mostTag
		}
		dangling += fl.dangling
	}
	slices.SortStableFunc(short, func(a, b fillWarning) int { return cmp.Compare(a.off, b.off) })
	for _, w := range short {
		l.warn(w.key, w.msg)
	}
	if dangling > 0 {
		d.Warnings = append(d.Warnings, danglingWarning(dangling, first, most, mostN, mostTag))
	}
	if k < nObj {
		return fmt.Errorf("%s: second pass found %d objects, the first %d: the file changed while being read", l.path, k, nObj)
	}
	l.inv = nil
	return nil
}

// pass2Sequential reads the file from the start.
func (l *loader) pass2Sequential(fl *filler) (int, error) {
	d := l.d
	f, r, err := l.open()
	if err != nil {
		return 0, err
	}
	defer f.Close()
	target := d.DumpIndex
	nObj := d.ids.n - 1
	k := 0
	var mainNode uint32
	var last int64
	others := hprof.OtherDumps{Want: target}
	for k < nObj {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil && others.Skip(r, err) {
			continue // damage in another dump, which pass 1 stepped over too
		}
		if err != nil {
			// Pass 1 read the same bytes, so this is a file that changed under us.
			return k, fmt.Errorf("%s: second pass: %w", l.path, err)
		}
		if err := l.progress(r, &last); err != nil {
			return k, err
		}
		if rec.Tag&hprof.SubTag == 0 || rec.Dump != target {
			continue
		}
		if fl.object(rec, &k, &mainNode) {
			fl.fill(rec.Tag, rec.ID, rec.Data, rec.Offset)
		}
	}
	return k, nil
}

// pass2Indexed reads the chosen dump's segments on every core. Each segment starts at the node
// numbers pass 1 noted for it; nodes' successor ranges are disjoint, so workers write the
// graph without locks (the weak-edge bit set, whose words neighbouring nodes share, atomically).
func (l *loader) pass2Indexed(newFiller func() *filler) (int, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	startMain := l.startMain
	workers := runtime.GOMAXPROCS(0)
	fills := make([]*filler, workers)
	for w := range fills {
		fills[w] = newFiller()
	}
	var total atomic.Int64
	var done atomic.Int64
	batches := make([]struct {
		headers []hprof.Header
		fields  [][]byte
	}, workers)
	for w := range batches {
		batches[w].headers, batches[w].fields = make([]hprof.Header, 256), make([][]byte, 256)
	}
	err = hprof.EachSegment(f, l.idx, l.segs, workers, func(w, i int, r *hprof.Reader) error {
		fl := fills[w]
		headers, fields := batches[w].headers, batches[w].fields
		k, mainNode := int(l.segFirst[i]), startMain[i]
		k0 := k
		r.SkipPrimitiveData = true
		for {
			// Instances and primitive arrays, most of the records, come straight from the
			// reader's buffer in batches, as in pass 1; the in-order pass takes every record from
			// Next, and the fuzz tests hold the two to the same graph.
			n, rec, err := r.Headers(headers, fields)
			for i := range headers[:n] {
				h := &headers[i]
				fl.mainObject(&k, &mainNode)
				fl.fill(h.Tag, h.ID, fields[i], h.Offset)
			}
			if n > 0 {
				continue
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: second pass: %w", l.path, err)
			}
			if fl.object(rec, &k, &mainNode) {
				fl.fill(rec.Tag, rec.ID, rec.Data, rec.Offset)
			}
		}
		total.Add(int64(k - k0))
		n := l.segs[i].Len
		if dn := done.Add(n); dn>>25 != (dn-n)>>25 {
			l.opt.Monitor.Read(dn, l.size)
		}
		return l.opt.Monitor.Err()
	})
	return int(total.Load()), err
}

// filler writes the successors of the objects one reader meets in pass 2, and keeps the
// warnings they give rise to for pass2 to merge.
type filler struct {
	l         *loader
	d         *Dump
	refs      [][]hprof.FieldRef // by class key
	watch     []*watchAt         // by class key; nil when nothing is watched
	classNode uint32
	idSize    int
	node      uint32 // the node object found last

	dangling      int
	firstDangling fillWarning
	// The record with the most dangling references (most: how many, mostTag: its kind), and the
	// one counted last.
	most, cur int
	mostAt    fillWarning
	mostTag   hprof.Tag
	curOff    int64
	short     []fillWarning
	shortSeen map[string]bool
}

type fillWarning struct {
	off      int64
	key, msg string
}

// object finds the node of an object record; k counts the object records so far and mainNode
// is the node of the last non-class one. It reports false for records that are not objects,
// and for class dumps that have no node.
func (fl *filler) object(rec *hprof.Record, k *int, mainNode *uint32) bool {
	l, d := fl.l, fl.d
	switch rec.Tag {
	case hprof.TagClassDump, hprof.TagInstanceDump, hprof.TagObjArrayDump, hprof.TagPrimArrayDump:
	default:
		return false
	}
	if !l.mainInOrder || rec.Tag != hprof.TagClassDump {
		fl.mainObject(k, mainNode)
		return true
	}
	*k++
	switch {
	case l.inv != nil:
		fl.node = l.inv[*k]
	default:
		n, ok := l.classRecNode(rec.ID, d)
		if !ok {
			return false
		}
		fl.node = n
	}
	return true
}

// mainObject is object for a record that is not a class dump: those keep their file order.
func (fl *filler) mainObject(k *int, mainNode *uint32) {
	l, d := fl.l, fl.d
	*k++
	if l.inv != nil {
		fl.node = l.inv[*k]
		return
	}
	// Objects other than class dumps keep their file order among themselves.
	n := *mainNode + 1
	for int(n) < len(d.Kind) && d.Kind[n] == KindClass {
		n++
	}
	*mainNode = n
	fl.node = n
}

// fill writes the successors of the object record with tag tag, id id, data data (field values,
// array elements; none is needed for a primitive array) at offset off, whose node object just
// found. The references are resolved in plain loops rather than through a closure called for each,
// a call per reference that cost pass 2 a noticeable share of its CPU time. A reference
// that finds no slot left no longer marks a weak bit on the next object's first edge.
func (fl *filler) fill(tag hprof.Tag, id uint64, data []byte, off int64) {
	d := fl.d
	g := d.Graph
	idSize := fl.idSize
	node := fl.node
	pos := g.Off[node]
	end := g.Off[node+1]
	succ := g.Succ[:end]
	putNode := func(t uint32) {
		if t != 0 && pos < end {
			succ[pos] = t
			pos++
		}
	}
	switch tag {
	case hprof.TagClassDump:
		putNode(fl.classNode)
		classEdges(fl.l.schema, fl.l.schema.Classes[id].Dump, func(_ string, ref uint64) {
			if t, ok := fl.resolve(ref, tag, off); ok && pos < end {
				succ[pos] = t
				pos++
			}
		})
	case hprof.TagInstanceDump:
		ck := d.ClassOf[node]
		isRef := d.Classes[ck].Ref != RefNone
		for _, fr := range fl.refs[ck] {
			if int(fr.Offset)+idSize > len(data) {
				fl.noteShort(ck, len(data), off)
				break
			}
			ref := readID(data[fr.Offset:], idSize)
			if ref == 0 {
				continue
			}
			t, ok := fl.resolve(ref, tag, off)
			if !ok || pos >= end {
				continue
			}
			if isRef && fl.l.schema.FieldName(fr.NameID) == "referent" &&
				fl.l.refClass >= 0 && fr.Declarer == d.Classes[fl.l.refClass].ID {
				atomic.OrUint64(&d.Weak[pos>>6], 1<<(pos&63))
			}
			succ[pos] = t
			pos++
		}
		putNode(d.Classes[ck].Node)
		if fl.watch != nil && fl.watch[ck] != nil {
			fl.keep(fl.watch[ck], node, data)
		}
	case hprof.TagObjArrayDump:
		for p := 0; p+idSize <= len(data); p += idSize {
			ref := readID(data[p:], idSize)
			if ref == 0 {
				continue
			}
			if t, ok := fl.resolve(ref, tag, off); ok && pos < end {
				succ[pos] = t
				pos++
			}
		}
		putNode(d.Classes[d.ClassOf[node]].Node)
	case hprof.TagPrimArrayDump:
		putNode(d.Classes[d.ClassOf[node]].Node)
	}
	for ; pos < end; pos++ {
		succ[pos] = pad
	}
}

// resolve finds the node of a non-null reference, counting it as dangling when no node has its
// id.
func (fl *filler) resolve(ref uint64, tag hprof.Tag, off int64) (uint32, bool) {
	t, ok := fl.d.Node(ref)
	if !ok {
		fl.dangle(ref, tag, off)
	}
	return t, ok
}

// dangle counts a reference to an id no node has, keeping the first for the warning.
func (fl *filler) dangle(ref uint64, tag hprof.Tag, off int64) {
	if fl.dangling++; fl.dangling == 1 {
		fl.firstDangling = fillWarning{off: off, msg: fmt.Sprintf("0x%x from %s at offset %d", ref, tag, off)}
		fl.curOff = off
	}
	// A record's references are resolved together, and a record never spans two fillers.
	if off != fl.curOff {
		fl.curOff, fl.cur = off, 0
	}
	if fl.cur++; fl.cur > fl.most {
		fl.most = fl.cur
		fl.mostAt, fl.mostTag = fillWarning{off: off, msg: fmt.Sprintf("%s at offset %d", tag, off)}, tag
	}
}

// danglingWarning says how many references were dropped for ids absent from the dump, where the
// first and most were, and, when most came from one object array, the usual reason: on a JVM with
// a class-data sharing archive (the default since JDK 12), the archive's array of roots refers to
// the Class objects of archived classes never loaded, which HotSpot leaves out of its dumps (a
// dump of the same program with -Xshare:off has none).
func danglingWarning(n int, first, most fillWarning, mostN int, mostTag hprof.Tag) string {
	w := fmt.Sprintf("%d reference(s) to object ids absent from the dump were dropped (first: %s", n, first.msg)
	if mostN > 1 {
		w += fmt.Sprintf("; %d of them from %s", mostN, most.msg)
	}
	w += ")"
	if mostTag == hprof.TagObjArrayDump && 2*mostN > n {
		w += "; most likely the Class objects of classes in the JVM's class-data sharing archive that were never loaded, which HotSpot leaves out of its dumps: harmless"
	}
	return w
}

// noteShort notes, once per class, an instance whose fields are fewer bytes than its class's layout
// needs.
func (fl *filler) noteShort(ck uint32, have int, off int64) {
	d := fl.d
	key := "short" + d.Classes[ck].Name
	if fl.shortSeen[key] {
		return
	}
	if fl.shortSeen == nil {
		fl.shortSeen = map[string]bool{}
	}
	fl.shortSeen[key] = true
	fl.short = append(fl.short, fillWarning{off: off, key: key,
		msg: fmt.Sprintf("INSTANCE DUMP at offset %d of %s has %d bytes of fields, fewer than its class layout needs", off, d.Classes[ck].Name, have)})
}
