package heapdump

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// pad marks successor slots reserved in pass 1 that pass 2 left empty (a reference to an id
// absent from the dump); they are squeezed out before the graph is handed over.
const pad = ^uint32(0)

// The graph numbers nodes and edges with 32-bit indices (heapgraph.Graph): a dump with more is
// refused as soon as its count is known, before the graph is built, rather than have an index
// wrap. Tests lower them to exercise the check on a small dump.
var (
	// maxNodes is the most nodes, the super root included: NoNode is no node.
	maxNodes = int(heapgraph.NoNode)
	// maxEdges is the most references, the super root's included: pad marks an empty slot.
	maxEdges = uint64(pad) - 1
)

// unresolved marks an instance whose class layout was not yet known in pass 1, so its
// reference count is an upper bound computed afterwards.
const unresolved = ^uint32(0)

// minObjectRecord is the smallest heap sub-record that makes a node (a primitive array with no
// elements and 4-byte ids): it bounds how many nodes a file of a given size can hold, so slices
// can be reserved once — untouched reserved pages cost no resident memory.
const minObjectRecord = 1 + 4 + 4 + 4 + 1

type classEntry struct {
	id   uint64     // class object id; 0 for an unnamed primitive-array class
	prim hprof.Type // element type for primitive-array classes
}

type rawRoot struct {
	id            uint64
	kind          RootKind
	thread, frame uint32
}

type loader struct {
	// Pass 1's own state (see shard): a second shard reads the far half of the file beside it.
	shard
	opt Options
	d   *Dump

	warned map[string]int

	// With an indexed file (pass1Indexed): the segments of the chosen dump, and for each the
	// object records and the non-class object records that come before it, so that pass 2 can
	// start reading anywhere.
	idx               *hprof.Index
	segs              []hprof.Segment
	segFirst, segMain []uint32
	startMain         []uint32     // per segment, the non-class node its count starts after (mainStarts)
	farRead           atomic.Int64 // bytes the far shard has read in pass 1 (see scanPass1)
	reserved          bool         // the columns have been reserved before (see reserve)

	inv           []uint32 // file-order record k → node, when the file is in no helpful order
	mainInOrder   bool     // records other than class dumps are in node order (see order)
	tooBig        bool
	dangling      int // references to ids not in the dump
	firstDangling string
	refClass      int32      // index of java.lang.ref.Reference in Dump.Classes, or -1
	slots         watchSlots // where pass 2 keeps watched fields (see watchLayouts)
}

// shard is what pass 1 builds from a run of consecutive records: the loader's own, and in an
// indexed pass (pass1Indexed) a second one that reads the segments of the far half of the file
// on another core, merged into the loader's afterwards (see mergeShard). The schema is shared:
// schemaMu guards it while two shards run.
type shard struct {
	mem      *memory.Budget // where the columns come from
	path     string
	size     int64
	schema   *hprof.Schema
	schemaMu *sync.Mutex

	// Per node, in file order during pass 1 (index 0 is the super root, in the loader's shard).
	ids  []uint64
	cls  []uint32 // class key; for class objects, the key of the class they represent
	kind []Kind
	aux  []uint32 // array length in pass 1; its array becomes the graph's shallow sizes
	deg  []uint32

	keys map[uint64]uint32
	// The last class key looked up.
	lastKeyID uint64
	lastKey   uint32
	haveKey   bool
	entries   []classEntry
	primKey   [16]int32
	roots     []rawRoot

	// The classes of the instances pass 1 met last, by a hash of their id: instances of a few
	// classes alternate (a map's entries, their keys and values), and one remembered class
	// left a map lookup and a layout lookup for most of them.
	inst [64]instClass

	mainCount uint32
	faulted   int               // nodes whose room pass 1 has had faulted in ahead (see faultAhead)
	window    int               // how far ahead of the appends (0: not at all)
	votes     hprof.LayoutVotes // for the size model (see hprof.InferModel)
}

// Load reads the heap dump at path into a graph. See the package comment for the graph's shape.
func Load(path string, opt Options) (*Dump, error) {
	x, err := NewLoader(path, opt)
	if err != nil {
		return nil, err
	}
	for _, step := range []func() error{x.Read, x.Index, x.References} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return x.Build(nil), nil
}

// Loader reads a heap dump in the steps that Load takes one after the other, for a caller with
// work of its own between them: Read (pass 1 over the file: objects, classes, roots), Index
// (the nodes' order and sizes, the id index, the successor offsets), References (pass 2: every
// object's references) and Build (unreachable objects, classes' totals). Each must follow the
// one before, once. Each reports to Options.Monitor and stops with its error once it is
// cancelled.
type Loader struct{ l *loader }

// NewLoader checks the options and the file, and returns a Loader ready to Read it.
func NewLoader(path string, opt Options) (*Loader, error) {
	switch opt.Compressed {
	case "", "auto", "on", "off":
	default:
		return nil, fmt.Errorf("%s: compressed-references setting %q (want auto, on or off)", path, opt.Compressed)
	}
	if opt.Dump < 0 {
		return nil, fmt.Errorf("%s: dump %d asked for: dumps are numbered from 1 (0 asks for the last)", path, opt.Dump)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	return &Loader{newLoader(path, st.Size(), opt)}, nil
}

// Read is pass 1: it records every object of the chosen dump (id, class, kind, array length)
// and a bound of its references, and the classes and roots. Peak memory stays the data's, not
// the data's plus the garbage collector's headroom: per-node columns are reserved once (see
// minObjectRecord) and the step allocates little else.
func (x *Loader) Read() error {
	l := x.l
	if err := l.opt.Monitor.Pass("read", "reading objects"); err != nil {
		return err
	}
	if err := l.pass1(); err != nil {
		return err
	}
	if len(l.ids) > maxNodes {
		return fmt.Errorf("%s: %d objects: more than the %d the graph's 32-bit node numbers hold; the dump cannot be analysed", l.path, len(l.ids)-1, maxNodes-1)
	}
	if l.d.gzip {
		// Growing slices (gzip input has no size to reserve by) leave their old arrays behind.
		// The indexed pass grows none, and gives back what its far shard leaves (mergeShard).
		debug.FreeOSMemory()
	}
	return nil
}

// Index puts the nodes in id order, sizes them, builds the id index and lays out the
// successor offsets for References. It fails when the references are more than the graph's
// 32-bit offsets hold (maxEdges).
func (x *Loader) Index() error {
	l := x.l
	if err := l.opt.Monitor.Begin("index", "indexing objects"); err != nil {
		return err
	}
	l.prepare()
	if l.tooBig {
		return fmt.Errorf("%s: more than %d references (counting one from the super root to each GC root, and to each unreachable object kept): more than the graph's 32-bit edge indices hold; the dump cannot be analysed", l.path, maxEdges)
	}
	return nil
}

// References is pass 2: it fills every object's successors.
func (x *Loader) References() error {
	l := x.l
	if err := l.opt.Monitor.Pass("graph", "reading references"); err != nil {
		return err
	}
	return l.pass2()
}

// Objects returns the number of objects Read found in the dump (0 before it), the unreachable
// ones too.
func (x *Loader) Objects() int { return max(len(x.l.ids)-1, 0) }

// Nodes returns the number of nodes so far: after References, the super root and every object,
// the unreachable ones too, so no fewer than the Dump's graph will have.
func (x *Loader) Nodes() int { return x.l.d.Graph.N() }

// Build finishes the graph (unreachable objects dropped or rooted by the thesis's rule, the
// classes' totals) and returns the Dump. The step runs mostly on one core: with starting not
// nil, a caller that can use the other meanwhile is told as it starts, with the nodes so far
// (see Nodes). The Loader must not be used afterwards.
func (x *Loader) Build(starting func(nodes int)) *Dump {
	l := x.l
	l.opt.Monitor.Begin("graph", "building the graph") // too short a step to stop in
	if starting != nil {
		starting(x.Nodes())
	}
	l.finish()
	l.slots = watchSlots{}
	l.d.schema = l.schema
	x.l = nil
	return l.d
}

func newLoader(path string, size int64, opt Options) *loader {
	return &loader{shard: shard{mem: opt.Memory, path: path, size: size, schemaMu: new(sync.Mutex)}, opt: opt,
		d: &Dump{Path: path, mem: opt.Memory}, warned: map[string]int{}}
}

func (l *loader) warn(key, msg string) {
	l.warned[key]++
	if l.warned[key] == 1 {
		l.d.Warnings = append(l.d.Warnings, msg)
	}
}

// open starts a pass over the file.
func (l *loader) open() (*os.File, *hprof.Reader, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, nil, err
	}
	r, err := hprof.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", l.path, err)
	}
	r.SkipPrimitiveData = true
	return f, r, nil
}

func (l *loader) progress(r *hprof.Reader, last *int64) error {
	return l.progressAt(r.Offset(), r.Gzip, last)
}

// progressAt reports off bytes of the file done (of an unknown total when gzip) at most every
// 32 MB, and then whether the load is cancelled.
func (l *loader) progressAt(off int64, gzip bool, last *int64) error {
	if off-*last < 32<<20 {
		return nil
	}
	*last = off
	total := l.size
	if gzip {
		total = -1
	}
	l.opt.Monitor.Read(off, total)
	return l.opt.Monitor.Err()
}

func (l *loader) reset() {
	l.votes = hprof.LayoutVotes{}
	l.ids = append(l.ids[:0], 0)
	l.cls = append(l.cls[:0], 0)
	l.kind = append(l.kind[:0], KindSuperRoot)
	l.aux = append(l.aux[:0], 0)
	l.deg = append(l.deg[:0], 0)
	l.keys = map[uint64]uint32{}
	l.haveKey = false
	l.inst = [len(l.inst)]instClass{}
	l.entries = l.entries[:0]
	for i := range l.primKey {
		l.primKey[i] = -1
	}
	l.roots = l.roots[:0]
	l.mainCount = 0
	l.schema.Reset()
}

func (s *shard) key(id uint64) uint32 {
	// Objects of one class tend to come in runs: skip the map when they do.
	if id == s.lastKeyID && s.haveKey {
		return s.lastKey
	}
	k, ok := s.keys[id]
	if !ok {
		k = uint32(len(s.entries))
		s.entries = append(s.entries, classEntry{id: id})
		s.keys[id] = k
	}
	s.lastKeyID, s.lastKey, s.haveKey = id, k, true
	return k
}

func (s *shard) primClassKey(t hprof.Type) uint32 {
	if s.primKey[t&15] < 0 {
		s.primKey[t&15] = int32(len(s.entries))
		s.entries = append(s.entries, classEntry{prim: t})
	}
	return uint32(s.primKey[t&15])
}

func (s *shard) add(id uint64, cls uint32, k Kind, aux uint32, deg uint32) {
	s.ids = append(s.ids, id)
	s.cls = append(s.cls, cls)
	s.kind = append(s.kind, k)
	s.aux = append(s.aux, aux)
	s.deg = append(s.deg, deg)
	if k != KindClass {
		s.mainCount++
	}
}

var rootKinds = map[hprof.Tag]RootKind{
	hprof.TagRootUnknown: RootUnknown, hprof.TagRootJNIGlobal: RootJNIGlobal, hprof.TagRootJNILocal: RootJNILocal,
	hprof.TagRootJavaFrame: RootJavaFrame, hprof.TagRootNativeStack: RootNativeStack,
	hprof.TagRootStickyClass: RootStickyClass, hprof.TagRootThreadBlock: RootThreadBlock,
	hprof.TagRootMonitorUsed: RootMonitorUsed, hprof.TagRootThreadObj: RootThreadObject,
}

// pass1 records every object of the chosen dump (id, class, kind, array length) and an upper
// bound of its out-degree, plus classes and roots.
func (l *loader) pass1() error {
	if ok, err := l.pass1Indexed(); ok || err != nil {
		return err
	}
	// Segments that an indexed pass read before it gave up are not this pass's.
	l.d.segIDs, l.d.hdr = nil, nil
	f, r, err := l.open()
	if err != nil {
		return err
	}
	defer f.Close()
	l.startSequential(r)
	cur := 0
	var last int64
	lastSeg := int64(-1)
	headers, fields := make([]hprof.Header, 256), make([][]byte, 256)
	// Damage inside a segment of another dump is stepped over, as pass1Indexed does.
	others := hprof.OtherDumps{Want: l.opt.Dump}
	for {
		// Most records come straight from the reader's buffer, as in pass1Indexed. A batch lies
		// in the segment of the record before it, so in its dump, and never starts a segment:
		// the first record of each comes from Next.
		n, rec, err := r.Headers(headers, fields)
		if n > 0 {
			if l.opt.Dump == 0 || cur == l.opt.Dump {
				for i := range headers[:n] {
					l.object(&headers[i], fields[i])
				}
			}
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil && others.Skip(r, err) {
			continue
		}
		if err != nil {
			if hprof.Truncated(err) && l.opt.AllowPartial {
				l.d.Partial = true
				l.d.Warnings = append(l.d.Warnings, fmt.Sprintf("partial: %v", err))
				break
			}
			return fmt.Errorf("%s: %w", l.path, err)
		}
		if err := l.progress(r, &last); err != nil {
			return err
		}
		// A dump starts with its first segment, which may hold no record at all (an empty dump).
		if rec.Dump != 0 && rec.Dump != cur {
			if l.opt.Dump != 0 && cur == l.opt.Dump {
				// The chosen dump is complete; count the rest without reading them.
				n, err := r.CountDumps()
				if err != nil && !(hprof.Truncated(err) && l.opt.AllowPartial) {
					return fmt.Errorf("%s: after dump %d: %w", l.path, l.opt.Dump, err)
				}
				l.d.Dumps = n
				break
			}
			cur = rec.Dump
			if l.opt.Dump == 0 {
				l.reset()
			}
			others.Started(cur)
		}
		if rec.Tag&hprof.SubTag == 0 {
			if rec.Tag == hprof.TagUTF8 || rec.Tag == hprof.TagLoadClass {
				if err := l.schema.Add(rec); err != nil {
					return fmt.Errorf("%s: %w", l.path, err)
				}
			}
			continue
		}
		if l.opt.Dump != 0 && rec.Dump != l.opt.Dump {
			continue
		}
		// The size model's votes stop at segment boundaries, as in pass1Indexed.
		if seg := r.Segment(); seg != lastSeg {
			l.votes.Break()
			lastSeg = seg
		}
		if err := l.record(rec, r); err != nil {
			return err
		}
	}
	if err := others.Err(); err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	return l.dumpsRead(r, cur)
}

// startSequential sets up the sequential pass 1 over r: the schema and the columns.
func (l *loader) startSequential(r *hprof.Reader) {
	l.d.IDSize, l.d.gzip = r.IDSize, r.Gzip
	l.schema = hprof.NewSchema(r.IDSize)
	if r.Gzip {
		// The size inflated is known only at the end: reserving for what the file would hold
		// at gzipRatio saves growing the columns by copies, the collector trying to stop the
		// goroutine in each copy.
		l.reserve(l.size * gzipRatio)
	} else {
		l.reserve(l.size)
	}
	l.reset()
}

// dumpsRead notes, after the sequential pass 1, how many dumps the file holds and which one
// was read (cur, the last one met, unless one was asked for), and fails when that one is not
// in the file.
func (l *loader) dumpsRead(r *hprof.Reader, cur int) error {
	if l.d.Dumps == 0 {
		l.d.Dumps = r.Dumps()
	}
	l.d.Bytes = r.Offset()
	l.d.DumpIndex = l.opt.Dump
	if l.d.DumpIndex == 0 {
		l.d.DumpIndex = cur
	}
	if l.d.Dumps == 0 {
		return fmt.Errorf("%s: no heap dump records (HEAP DUMP or HEAP DUMP SEGMENT) in the file", l.path)
	}
	if l.opt.Dump > l.d.Dumps {
		return fmt.Errorf("%s: has %d heap dump(s), dump %d was asked for", l.path, l.d.Dumps, l.opt.Dump)
	}
	return nil
}

// record takes one sub-record of the chosen dump in pass 1.
func (s *shard) record(rec *hprof.Record, r *hprof.Reader) error {
	idSize := r.IDSize
	switch {
	case rec.Tag.IsRoot():
		s.roots = append(s.roots, rawRoot{id: rec.ID, kind: rootKinds[rec.Tag], thread: rec.Serial, frame: rec.Frame})
	case rec.Tag == hprof.TagClassDump:
		s.votes.Object(rec.ID)
		s.schemaMu.Lock()
		err := s.schema.Add(rec)
		var n uint32
		if err == nil {
			n = 1
			classEdges(s.schema, s.schema.Classes[rec.ID].Dump, func(string, uint64) { n++ })
		}
		s.schemaMu.Unlock()
		if err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		s.inst = [len(s.inst)]instClass{} // a class dumped again may have changed layouts
		s.add(rec.ID, s.key(rec.ID), KindClass, 0, n)
	case rec.Tag == hprof.TagInstanceDump:
		s.votes.Object(rec.ID)
		c := s.instClass(rec.Class)
		s.add(rec.ID, c.key, KindInstance, 0, c.degree(rec.Data, idSize))
	case rec.Tag == hprof.TagObjArrayDump:
		s.votes.Array(rec.ID, rec.Length, 0)
		deg := uint32(1)
		for p := 0; p+idSize <= len(rec.Data); p += idSize {
			if r.ReadID(rec.Data[p:]) != 0 {
				deg++
			}
		}
		s.add(rec.ID, s.key(rec.Class), KindObjArray, rec.Length, deg)
	case rec.Tag == hprof.TagPrimArrayDump:
		s.votes.Array(rec.ID, rec.Length, rec.Elem.Size(idSize))
		s.add(rec.ID, s.primClassKey(rec.Elem), KindPrimArray, rec.Length, 1)
	}
	return nil
}

// gzipRatio is how many times its size a gzip-compressed dump is taken to inflate to, for the
// room pass 1 reserves: HPROF files compress about 4 to 6 times, and a node is reserved for every
// minObjectRecord bytes where objects take about 45, so that leaves ample room. A dump that
// inflates further only makes the columns grow by copies.
const gzipRatio = 8

// reserve sets aside room for as many nodes as a file of size bytes can hold.
func (l *loader) reserve(size int64) {
	// The reservations are several times what a dump fills, which costs nothing only while
	// their pages are never touched. An allocation that lands on memory the program used and
	// freed before (the symbol table's garbage, the columns of a pass that gave up) is cleared
	// in full, touching every page; memory given back to the system first is known to be zero
	// and is not. The first reservation follows little but the walk's buffers: the collection
	// there cost time and changed nothing.
	if l.reserved {
		debug.FreeOSMemory()
	}
	l.reserved = true
	est := int(size/minObjectRecord) + 2
	l.ids = memory.Reserve[uint64](l.mem, est)[:0]
	l.aux = memory.Reserve[uint32](l.mem, est)[:0]
	l.cls = memory.Reserve[uint32](l.mem, est)[:0]
	l.deg = memory.Reserve[uint32](l.mem, est+1)[:0]
	l.kind = memory.Reserve[Kind](l.mem, est)[:0]
}

// pass1Indexed is pass 1 for an uncompressed, intact file: it indexes the heap-dump segments
// (pass 2 reads them in parallel) and reads only those of the chosen dump. It reports false,
// having changed nothing that pass 1 does not set up again, when the file cannot be indexed
// (gzip, truncated, corrupt); the sequential pass then reads it and reports what is wrong.
func (l *loader) pass1Indexed() (bool, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	target := l.opt.Dump
	if target == 0 {
		// The last dump. Files nearly always hold one, so the scan reads the first while the
		// walk goes on, and starts again on the last if the walk finds another.
		target = 1
	}
	idx, err := l.scanPass1(f, target)
	if err == errLaterDump {
		// Only the number of dumps is wanted of this walk: the symbols are stepped over.
		all, err2 := hprof.ReadIndexWith(f, l.size, hprof.IndexOptions{SkipUTF8: true})
		if err2 != nil || all.Dumps == 0 {
			l.segs = nil
			return false, nil
		}
		target = all.Dumps
		idx, err = l.scanPass1(f, target)
	}
	if err != nil || idx.Dumps == 0 || l.opt.Dump > idx.Dumps {
		l.segs = nil
		return false, nil
	}
	l.idx = idx
	l.d.Dumps, l.d.DumpIndex, l.d.Bytes = idx.Dumps, target, l.size
	return true, nil
}

// errLaterDump stops scanPass1 reading the first dump when the last was asked for and the walk
// has found a later one.
var errLaterDump = errors.New("the file holds a later dump")

// scanPass1 reads the segments of dump target as the walk over the file's index finds them
// (hprof.ScanSegments): on a file read from disk, the walk's hops from one segment header to
// the next would otherwise cost as long again as reading the file.
//
// With two cores, the segments in the far half of the file go to a second shard (see farShard),
// read on the other core and merged in after: decoding the records was pass 1's whole cost on
// one core. The far half starts at the first segment of the dump at or past the file's middle
// that follows one before it (halves), a rule that the walk, which hands the far shard its
// segments, and the worker, which leaves them alone, apply each on its own to the segments in
// file order. The steps:
//  1. the walk notes the class names and the segments, handing the far half to the far shard
//     (scan.top, scan.walked);
//  2. the worker reads the near half's segments into the loader, the first of them starting
//     the columns (scan.read, scan.start);
//  3. the far shard is waited for and merged in (scan.joinFar), and the columns' room faulted
//     in past their ends goes back (releaseWindow);
//  4. the schema takes the names the dump's classes and fields need (scan.names).
func (l *loader) scanPass1(f *os.File, target int) (*hprof.Index, error) {
	// Names do not depend on the id size; the schema learns it from the first segment. Pass 1
	// needs no names: the walk, which runs beside it, keeps the class names it meets for after,
	// and steps over the symbols, of which the schema then takes only the names it keeps
	// (Schema.TakeNames). Taking every symbol as the walk met it cost strings and collections,
	// before pass 1 could start.
	l.schema = hprof.NewSchema(8)
	l.segs, l.segFirst, l.segMain = l.segs[:0], l.segFirst[:0], l.segMain[:0]
	l.d.segIDs = l.d.segIDs[:0]
	sc := &scan{l: l, f: f, target: target, firstDone: make(chan struct{}),
		headers: make([]hprof.Header, 256), fields: make([][]byte, 256)}
	// With the file in the page cache, the far half of it read on the second core shortens pass 1.
	// Read from disk, two streams at once made pass 1 slower: the disk, not the parsing, sets
	// the pace there. The file's last pages, which this
	// run has not read yet, tell which it is.
	if runtime.GOMAXPROCS(0) >= 2 && l.size >= farShardMin && fileCached(f, l.size) {
		sc.walk.split = l.size / 2
		sc.worker.split = sc.walk.split
	}
	idx, err := hprof.ScanSegments(f, l.size, hprof.ScanOptions{
		IndexOptions: hprof.IndexOptions{SkipUTF8: true, Top: sc.top, Segment: sc.walked},
		Workers:      1,
	}, sc.read)
	if err == nil {
		err = sc.damaged // the walk found no later dump
	}
	err = sc.joinFar(err)
	l.releaseWindow()
	if err != nil {
		return nil, err
	}
	if idx.Dumps == 0 || l.opt.Dump > idx.Dumps {
		return idx, nil // the sequential pass says what is wrong
	}
	return idx, sc.names(idx)
}

// scan is the state of scanPass1, shared by the walk over the index and the worker that reads
// the segments it finds.
type scan struct {
	l      *loader
	f      *os.File
	target int // the dump read
	// classNames are the LOAD CLASS records the walk met, for the schema once it is started.
	classNames []hprof.Record
	started    bool // the worker has met the dump's first segment
	// firstDone is closed once the near shard has read its first segment of the dump: it starts
	// the shard (the ids' size, the columns) and reads the class dumps, which HotSpot writes
	// first, so the far shard waits for it rather than meet instances of classes not known yet.
	firstDone chan struct{}
	far       *farShard
	// walk and worker part the segments between the shards, each as it meets them.
	walk, worker halves
	// Reading the first dump while the walk looks for a later one, the worker may meet damage
	// in it before the walk meets the later dump, which the damage is no error for (the pass in
	// order steps over damage in another dump). It keeps the error for the walk's end and reads
	// no more segments meanwhile: returned at once, it stopped the walk, and the whole pass
	// fell back to the reading in order, or not, as the two goroutines happened to run.
	damaged error
	last    int64 // progress
	headers []hprof.Header
	fields  [][]byte
}

// halves applies the rule that parts a dump's segments between the near and the far shard to
// the segments in file order: the far half starts at the first segment at or past split that
// follows one before it. split 0: no far shard.
type halves struct {
	split    int64
	nearSeen bool // a segment of the dump before split has been met
}

// far reports whether seg, the next segment of the dump in file order, is the far shard's.
func (h *halves) far(seg hprof.Segment) bool {
	if h.split == 0 {
		return false
	}
	if seg.Offset < h.split {
		h.nearSeen = true
		return false
	}
	return h.nearSeen
}

// top keeps the class names the walk meets (it steps over the symbols).
func (sc *scan) top(rec *hprof.Record) error {
	if rec.Tag == hprof.TagLoadClass {
		sc.classNames = append(sc.classNames, hprof.Record{Tag: rec.Tag, ID: rec.ID, NameID: rec.NameID})
	}
	return nil
}

// walked takes a segment header the walk met: it stops the walk at a later dump when the last
// is wanted, and hands the far half's segments to the far shard, started by the first of them.
func (sc *scan) walked(idx *hprof.Index, seg hprof.Segment) error {
	if sc.l.opt.Dump == 0 && seg.Dump > sc.target {
		return errLaterDump
	}
	if seg.Dump == sc.target && sc.walk.far(seg) {
		if sc.far == nil {
			sc.far = sc.l.newFarShard(sc.f, idx, sc.walk.split, sc.firstDone)
		}
		sc.far.feed.add(seg)
	}
	return nil
}

// start starts the loader's columns, once the dump's identifier size is known.
func (sc *scan) start(idSize int) {
	l := sc.l
	sc.started = true
	l.schema.IDSize, l.d.IDSize = idSize, idSize
	l.reserve(l.size)
	l.reset()
	l.faulted, l.window = 0, faultWindow(l.ids, sc.walk.split == 0)
}

// read is the worker: it reads a segment of the dump's near half into the loader.
func (sc *scan) read(_, _ int, seg hprof.Segment, r *hprof.Reader) error {
	l := sc.l
	if seg.Dump != sc.target || sc.damaged != nil || sc.worker.far(seg) {
		return nil
	}
	if !sc.started {
		sc.start(r.IDSize)
	}
	l.segs = append(l.segs, seg)
	l.segFirst = append(l.segFirst, uint32(len(l.ids)-1))
	l.segMain = append(l.segMain, l.mainCount)
	r.SkipPrimitiveData = true
	// The far shard's bytes count too: the halves are read at once.
	if err := l.progressAt(r.Offset()+l.farRead.Load(), false, &sc.last); err != nil {
		return err
	}
	first := len(l.ids)
	if err := l.readSegment(r, sc.headers, sc.fields); err != nil {
		if l.opt.Dump == 0 {
			sc.damaged = err
			return nil
		}
		return err
	}
	// The segment's ids are fresh in the cache: their range costs next to nothing.
	l.d.segIDs = append(l.d.segIDs, newSegmentIDs(seg, l.ids[first:]))
	select {
	case <-sc.firstDone:
	default:
		close(sc.firstDone)
	}
	return nil
}

// joinFar waits for the far shard, if any, and merges it in unless the pass failed (err); it
// returns the pass's error, or the far shard's.
func (sc *scan) joinFar(err error) error {
	if sc.far == nil {
		return err
	}
	if ferr := sc.far.wait(err != nil); err == nil {
		err = ferr
	}
	if err == nil {
		sc.l.mergeShard(sc.far)
	}
	sc.l.farRead.Store(0)
	return err
}

// releaseWindow gives back the room faulted in past the columns' last node: it would stay
// resident, unused, through the analysis.
func (l *loader) releaseWindow() {
	if l.window > 0 {
		memory.FaultsDone(l.mem)
		memory.Release(l.mem, l.ids[len(l.ids):])
		memory.Release(l.mem, l.deg[len(l.deg):], l.aux[len(l.aux):], l.cls[len(l.cls):])
		memory.Release(l.mem, l.kind[len(l.kind):])
	}
}

// names gives the schema the class names the walk kept and reads back, from the symbols the
// walk stepped over, the names of the classes and fields it holds.
func (sc *scan) names(idx *hprof.Index) error {
	l := sc.l
	if !sc.started { // the dump's segments hold no records
		sc.start(idx.IDSize)
	}
	for i := range sc.classNames {
		l.schema.Add(&sc.classNames[i]) // cannot fail: no CLASS DUMP
	}
	if err := l.schema.TakeNames(sc.f, idx.UTF8); err != nil {
		return err
	}
	l.d.hdr = &hprof.Index{Format: idx.Format, IDSize: idx.IDSize}
	return nil
}

// readSegment reads the records of the segment r is over into the shard.
func (s *shard) readSegment(r *hprof.Reader, headers []hprof.Header, fields [][]byte) error {
	s.votes.Break() // segments are read in order, but the next may start another region
	s.faultAhead()
	for {
		// Most records come straight from the reader's buffer, without a Record.
		n, rec, err := r.Headers(headers, fields)
		for i := range headers[:n] {
			s.object(&headers[i], fields[i])
		}
		if n > 0 {
			continue
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.record(rec, r); err != nil {
			return err
		}
	}
}

// farShardMin is the smallest file whose far half pass 1 reads on a second core: below it the
// second shard's set-up and merge cost about what it saves. Tests lower it to put the far shard
// to work on small dumps.
var farShardMin int64 = 16 << 20

// fileCached is memory.CachedEnd, which tests replace.
var fileCached = memory.CachedEnd

// farShard reads the segments of the far half of the file into a shard of its own, on a
// goroutine of its own, as the walk finds them (see scanPass1).
type farShard struct {
	shard
	feed     segmentFeed
	segs     []hprof.Segment
	segFirst []uint32 // as the loader's, counted from the shard's first node
	segMain  []uint32
	segIDs   []segmentIDs
	read     *atomic.Int64 // bytes of segments read, for the progress shown
	abort    chan struct{}
	done     chan struct{}
	err      error
}

// newFarShard starts a far shard reading f, whose walk is at idx, from split on, once
// firstDone is closed.
func (l *loader) newFarShard(f *os.File, idx *hprof.Index, split int64, firstDone <-chan struct{}) *farShard {
	est := int((l.size-split)/minObjectRecord) + 2
	fs := &farShard{
		shard: shard{mem: l.mem, path: l.path, size: l.size, schema: l.schema, schemaMu: l.schemaMu,
			ids: memory.Reserve[uint64](l.mem, est)[:0], cls: memory.Reserve[uint32](l.mem, est)[:0],
			kind: memory.Reserve[Kind](l.mem, est)[:0], aux: memory.Reserve[uint32](l.mem, est)[:0],
			deg: memory.Reserve[uint32](l.mem, est)[:0], keys: map[uint64]uint32{}},
		read:  &l.farRead,
		abort: make(chan struct{}),
		done:  make(chan struct{}),
	}
	fs.window = faultWindow(fs.ids, false)
	fs.feed.wake = make(chan struct{}, 1)
	for i := range fs.primKey {
		fs.primKey[i] = -1
	}
	hdr := &hprof.Index{Format: idx.Format, IDSize: idx.IDSize}
	go func() {
		defer close(fs.done)
		select {
		case <-firstDone:
		case <-fs.abort:
			return
		}
		buf := make([]byte, hprof.SegmentBuf)
		headers, fields := make([]hprof.Header, 256), make([][]byte, 256)
		for {
			seg, ok := fs.feed.next(fs.abort)
			if !ok {
				return
			}
			fs.segs = append(fs.segs, seg)
			fs.segFirst = append(fs.segFirst, uint32(len(fs.ids)))
			fs.segMain = append(fs.segMain, fs.mainCount)
			r := hprof.NewSegmentReader(f, hdr, seg, buf)
			r.SkipPrimitiveData = true
			first := len(fs.ids)
			if err := fs.readSegment(r, headers, fields); err != nil {
				fs.err = err
				return
			}
			fs.segIDs = append(fs.segIDs, newSegmentIDs(seg, fs.ids[first:]))
			fs.read.Add(seg.Len)
		}
	}()
	return fs
}

// wait ends the far shard once the walk is done (abort: the scan failed, and its work is not
// wanted) and returns its error.
func (fs *farShard) wait(abort bool) error {
	if abort {
		close(fs.abort)
	}
	fs.feed.close()
	<-fs.done
	return fs.err
}

// mergeShard appends the far shard's nodes to the loader's, its class keys mapped to the
// loader's: the columns come out as one shard reading every segment in order would have made
// them, keys numbered in the order their classes were first met.
func (l *loader) mergeShard(fs *farShard) {
	if testMerged != nil {
		testMerged(len(fs.segs))
	}
	remap := make([]uint32, len(fs.entries))
	prim := make([]bool, len(fs.entries))
	for _, k := range fs.primKey {
		if k >= 0 {
			prim[k] = true
		}
	}
	// In the order the far shard numbered them, which is the order it met them.
	for k, e := range fs.entries {
		if prim[k] {
			remap[k] = l.primClassKey(e.prim)
		} else {
			remap[k] = l.key(e.id)
		}
	}
	for i, c := range fs.cls {
		fs.cls[i] = remap[c]
	}
	base := uint32(len(l.ids) - 1)
	for i := range fs.segs {
		l.segs = append(l.segs, fs.segs[i])
		l.segFirst = append(l.segFirst, base+fs.segFirst[i])
		l.segMain = append(l.segMain, l.mainCount+fs.segMain[i])
	}
	l.d.segIDs = append(l.d.segIDs, fs.segIDs...)
	l.ids = memory.AppendReleasing(l.mem, l.ids, fs.ids)
	l.cls = memory.AppendReleasing(l.mem, l.cls, fs.cls)
	l.kind = memory.AppendReleasing(l.mem, l.kind, fs.kind)
	l.aux = memory.AppendReleasing(l.mem, l.aux, fs.aux)
	l.deg = memory.AppendReleasing(l.mem, l.deg, fs.deg)
	// And the room past the far shard's last node that was faulted in ahead (memory.FaultsDone
	// is waited for, with the loader's own, before the loader's room goes back).
	memory.FaultsDone(l.mem)
	memory.Release(l.mem, fs.ids)
	memory.Release(l.mem, fs.cls, fs.aux, fs.deg)
	memory.Release(l.mem, fs.kind)
	l.mainCount += fs.mainCount
	l.roots = append(l.roots, fs.roots...)
	l.votes.Add(&fs.votes)
}

// testMerged, when set, is told how many segments each far shard merged: tests check that the
// shard they mean to exercise did run.
var testMerged func(segs int)

// segmentFeed passes segments from the walk to the far shard in order, without bound: the walk
// must never wait for the shard, which may be waiting for the near shard (which may be waiting
// for the walk), or gone after an error.
type segmentFeed struct {
	mu     sync.Mutex
	segs   []hprof.Segment
	head   int
	closed bool
	wake   chan struct{} // holds a token while there may be news
}

func (q *segmentFeed) add(s hprof.Segment) {
	q.mu.Lock()
	q.segs = append(q.segs, s)
	q.mu.Unlock()
	q.signal()
}

func (q *segmentFeed) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *segmentFeed) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// next returns the next segment, waiting for one; false once the feed is closed and empty, or
// on abort.
func (q *segmentFeed) next(abort <-chan struct{}) (hprof.Segment, bool) {
	for {
		q.mu.Lock()
		if q.head < len(q.segs) {
			s := q.segs[q.head]
			q.head++
			q.mu.Unlock()
			return s, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return hprof.Segment{}, false
		}
		select {
		case <-q.wake:
		case <-abort:
			return hprof.Segment{}, false
		}
	}
}

// faultAheadNodes is how far ahead of pass 1's appends their room is faulted in where it takes
// huge pages: a few segments' worth of nodes (11 MB of the node columns).
const faultAheadNodes = 1 << 19

// smallFaultAheadNodes is the same for columns of 4 KB pages, faulted in ahead only while the
// other core has nothing else to do (one shard): 1.3 MB of them, some segments' worth.
const smallFaultAheadNodes = 1 << 16

// faultWindow is how far ahead of pass 1's appends the room of columns like ids is faulted in
// (see faultAhead), for a shard that reads alone or beside another.
func faultWindow(ids []uint64, alone bool) int {
	switch {
	case memory.HugeArray(int64(cap(ids)) * 8):
		return faultAheadNodes
	case alone && runtime.GOMAXPROCS(0) >= 2:
		return smallFaultAheadNodes
	}
	return 0
}

// faultAhead has the pages of the node columns that pass 1 will soon append to faulted in on
// another core (memory.FaultAhead): they are reserved for the largest count the file could
// hold, which leaves them untouched until written, and on a virtual machine fresh pages cost
// pass 1 about as much as decoding did.
func (s *shard) faultAhead() {
	n := len(s.ids)
	if s.window == 0 || n+s.window/2 < s.faulted {
		return
	}
	from, to := s.faulted, n+s.window
	memory.FaultAhead(s.mem, s.ids, from, to)
	memory.FaultAhead(s.mem, s.aux, from, to)
	memory.FaultAhead(s.mem, s.cls, from, to)
	memory.FaultAhead(s.mem, s.deg, from, to)
	memory.FaultAhead(s.mem, s.kind, from, to)
	s.faulted = to
}

// object takes an instance or primitive array from hprof.Reader.Headers in pass 1, as record
// takes it from a Record.
func (s *shard) object(h *hprof.Header, fields []byte) {
	if h.Tag == hprof.TagInstanceDump {
		s.votes.Object(h.ID)
		c := s.instClass(h.Class)
		s.add(h.ID, c.key, KindInstance, 0, c.degree(fields, 8))
	} else {
		s.votes.Array(h.ID, h.Length, h.Elem.Size(8)) // Headers decodes 8-byte ids only
		s.add(h.ID, s.primClassKey(h.Elem), KindPrimArray, h.Length, 1)
	}
}

// instClass is what pass 1 needs of an instance's class: its key and its reference fields.
type instClass struct {
	id   uint64
	key  uint32
	refs []hprof.FieldRef
	ok   bool // the layout is known (see hprof.Schema.InstanceRefs)
	set  bool
}

// instClass looks up class in the cache of recent classes, asking the schema again for a class
// whose layout was not known yet.
func (s *shard) instClass(class uint64) *instClass {
	c := &s.inst[(class*0x9E3779B97F4A7C15)>>58]
	if !c.set || c.id != class || !c.ok {
		// InstanceRefs works the layout out on first use, writing to the schema.
		s.schemaMu.Lock()
		refs, _, ok := s.schema.InstanceRefs(class)
		s.schemaMu.Unlock()
		*c = instClass{id: class, key: s.key(class), refs: refs, ok: ok, set: true}
	}
	return c
}

// degree bounds an instance's out-degree: its class edge and its non-null reference fields, or
// unresolved while its class's layout is not known.
func (c *instClass) degree(fields []byte, idSize int) uint32 {
	if !c.ok {
		return unresolved
	}
	deg := uint32(1)
	if idSize == 8 {
		for _, fr := range c.refs {
			if o := int(fr.Offset); o+8 <= len(fields) {
				// Counted without a branch: null or not is a coin toss to the predictor. A
				// zero test needs no byte order.
				x := binary.LittleEndian.Uint64(fields[o:])
				deg += uint32((x | -x) >> 63)
			}
		}
		return deg
	}
	for _, fr := range c.refs {
		if int(fr.Offset)+idSize <= len(fields) && readID(fields[fr.Offset:], idSize) != 0 {
			deg++
		}
	}
	return deg
}

func readID(b []byte, idSize int) uint64 {
	if idSize == 4 {
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

// classEdges calls fn for each outgoing reference of a class object after its "<class>" edge,
// in graph order. Pass 1, pass 2 and EdgeNames share it so that edge positions agree. Classes
// number thousands, not millions, so building the names here costs nothing that matters.
func classEdges(s *hprof.Schema, cd *hprof.ClassDump, fn func(name string, id uint64)) {
	for _, e := range [...]struct {
		name string
		id   uint64
	}{{"<super>", cd.Super}, {"<classloader>", cd.Loader}, {"<signers>", cd.Signers}, {"<protection domain>", cd.ProtectionDomain}} {
		if e.id != 0 {
			fn(e.name, e.id)
		}
	}
	for _, st := range cd.Statics {
		if st.Value.Type == hprof.TypeObject && st.Value.Bits != 0 {
			fn(s.FieldName(st.NameID), st.Value.Bits)
		}
	}
	for _, c := range cd.Constants {
		if c.Type == hprof.TypeObject && c.Bits != 0 {
			fn(fmt.Sprintf("<constant pool[%d]>", c.Index), c.Bits)
		}
	}
}
