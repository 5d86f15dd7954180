package histogram

import (
	"cmp"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// classRec is a CLASS DUMP a worker met and decoded, kept until the schema takes them in file
// order (a class dumped twice is described by its last dump, as when reading in order).
type classRec struct {
	off  int64
	dump int
	cd   *hprof.ClassDump
}

// fromSegments computes the histogram of an uncompressed dump by handing its heap-dump segments
// to one worker per core as the walk over the file's index finds them (hprof.ScanSegments), each
// worker with its own tallies, merged at the end. It reports false when the file is not one it
// can read that way — gzip, truncated, corrupt — and the caller reads it in order instead, which
// also gives the errors (with offsets) and the partial result. The steps:
//  1. the walk keeps the class names and notes the latest dump (segmentCount.top, .walked),
//     then reads back the names the classes need (.names);
//  2. the workers count the segments of the dump wanted (.read);
//  3. the workers' tallies of that dump are merged (.merged), its class dumps taken in file
//     order (.classDumps), and the histogram made (finishDump).
func fromSegments(path string, f *os.File, opt Options) (*Histogram, bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, false
	}
	workers := runtime.GOMAXPROCS(0)
	// LOAD CLASS records do not depend on the id size; the schema learns it from the index.
	// Only class names are wanted of the symbols, read once the classes are known.
	sc := &segmentCount{f: f, size: st.Size(), opt: opt, schema: hprof.NewSchema(8),
		tallies: make([]map[int]*tally, workers), classes: make([][]classRec, workers), damaged: make([]map[int]bool, workers)}
	idx, err := hprof.ScanSegments(f, st.Size(), hprof.ScanOptions{
		IndexOptions: hprof.IndexOptions{SkipUTF8: true, Top: sc.top, Segment: sc.walked},
		Workers:      workers,
		// From the page cache the walk is quick, but the workers can hold both cores while it
		// waits for one; from disk it waits on the disk at every hop, and a worker of its own
		// reads meanwhile.
		WalkerWorks: memory.CachedEnd(f, st.Size()),
		Walked:      sc.names,
	}, sc.read)
	if err != nil || sc.namesErr != nil || idx.Dumps == 0 || opt.Dump > idx.Dumps {
		return nil, false
	}
	target := opt.Dump
	if target == 0 {
		target = idx.Dumps
	}
	t, ok := sc.merged(target, idx.IDSize)
	if !ok {
		return nil, false // read in order, which says where
	}
	sc.classDumps(target)
	h := &Histogram{Source: path, Format: "hprof", Dumps: idx.Dumps, DumpIndex: target}
	if err := h.finishDump(path, t, sc.schema, idx.IDSize, opt); err != nil {
		return nil, false
	}
	return h, true
}

// segmentCount is the state of fromSegments, shared by the walk and the workers, each of which
// keeps its tallies, class dumps and damage in a slot of its own.
type segmentCount struct {
	f      *os.File
	size   int64
	opt    Options
	schema *hprof.Schema
	// A worker's tallies by dump. Which dump is the last is known only when the walk ends, but
	// a segment claimed after the walk has found a later dump is not read.
	tallies []map[int]*tally
	classes [][]classRec
	// The dumps in which a worker met damage, for the last dump asked for: damage in a dump that
	// a later one follows is no error (the reading in order steps over it), and which comes
	// first, the worker meeting the damage or the walk meeting the later dump, is the
	// goroutines' race. Returned at once, the error stopped the walk, and the histogram was read
	// again in order; the reading in order also says what and where the damage is.
	damaged    []map[int]bool
	latest     atomic.Int64 // the last dump the walk has found so far
	namesErr   error
	done       atomic.Int64 // bytes of segments counted, for progress
	progressMu sync.Mutex
}

// top takes the class names the walk meets.
func (sc *segmentCount) top(rec *hprof.Record) error {
	if rec.Tag == hprof.TagLoadClass {
		return sc.schema.Add(rec)
	}
	return nil
}

// walked notes the dump of each segment the walk meets.
func (sc *segmentCount) walked(_ *hprof.Index, seg hprof.Segment) error {
	sc.latest.Store(int64(seg.Dump))
	return nil
}

// names reads back the class names from the runs of symbols the index noted, on the walk's
// goroutine, while the other workers count.
func (sc *segmentCount) names(idx *hprof.Index) error {
	sc.schema.IDSize = idx.IDSize
	sc.namesErr = sc.schema.TakeNames(sc.f, idx.UTF8)
	return nil
}

// read is worker w: it counts a segment of the dump wanted into its tally of that dump.
func (sc *segmentCount) read(w, _ int, seg hprof.Segment, r *hprof.Reader) error {
	opt := sc.opt
	if opt.Dump != 0 && seg.Dump != opt.Dump || opt.Dump == 0 && int64(seg.Dump) < sc.latest.Load() || sc.damaged[w][seg.Dump] {
		return nil
	}
	t := sc.tallies[w][seg.Dump]
	if t == nil {
		if sc.tallies[w] == nil {
			sc.tallies[w] = map[int]*tally{}
		}
		dump := seg.Dump
		t = newTally(r.IDSize, func(rec *hprof.Record) error {
			// Decoded here, on every core, rather than after the count on one.
			cd, err := hprof.DecodeClassDump(rec.ID, rec.Data, r.IDSize, rec.Offset)
			if err != nil {
				return err
			}
			sc.classes[w] = append(sc.classes[w], classRec{off: rec.Offset, dump: dump, cd: cd})
			return nil
		})
		sc.tallies[w][seg.Dump] = t
	}
	r.SkipPrimitiveData = true
	if err := t.segment(r); err != nil {
		if opt.Dump != 0 {
			return err
		}
		if sc.damaged[w] == nil {
			sc.damaged[w] = map[int]bool{}
		}
		sc.damaged[w][seg.Dump] = true
		return nil
	}
	if opt.Progress != nil {
		d := sc.done.Add(seg.Len)
		if d>>24 != (d-seg.Len)>>24 {
			sc.progressMu.Lock()
			opt.Progress(d, sc.size)
			sc.progressMu.Unlock()
		}
	}
	return nil
}

// merged is the workers' tallies of dump target added up, or false when a worker met damage in
// it.
func (sc *segmentCount) merged(target, idSize int) (*tally, bool) {
	for _, m := range sc.damaged {
		if m[target] {
			return nil, false
		}
	}
	var t *tally
	for _, m := range sc.tallies {
		switch o := m[target]; {
		case o == nil:
		case t == nil:
			t = o
		default:
			t.merge(o)
		}
	}
	if t == nil { // the dump's segments hold no records
		t = newTally(idSize, nil)
	}
	return t, true
}

// classDumps gives the schema the class dumps of dump target in file order.
func (sc *segmentCount) classDumps(target int) {
	var all []classRec
	for _, c := range sc.classes {
		for _, r := range c {
			if r.dump == target {
				all = append(all, r)
			}
		}
	}
	slices.SortFunc(all, func(a, b classRec) int { return cmp.Compare(a.off, b.off) })
	sc.schema.ExpectClasses(len(all))
	for _, c := range all {
		sc.schema.AddClassDump(c.cd)
	}
}
