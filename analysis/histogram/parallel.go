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
// also gives the errors (with offsets) and the partial result.
func fromSegments(path string, f *os.File, opt Options) (*Histogram, bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, false
	}
	// LOAD CLASS records do not depend on the id size; the schema learns it from the index.
	// Only class names are wanted of the symbols, read once the classes are known.
	schema := hprof.NewSchema(8)
	workers := runtime.GOMAXPROCS(0)
	// A worker's tallies by dump. Which dump is the last is known only when the walk ends, but
	// a segment claimed after the walk has found a later dump is not read.
	tallies := make([]map[int]*tally, workers)
	classes := make([][]classRec, workers)
	// The dumps in which a worker met damage, for the last dump asked for: damage in a dump that
	// a later one follows is no error (the reading in order steps over it), and which comes
	// first, the worker meeting the damage or the walk meeting the later dump, is the
	// goroutines' race. Returned at once, the error stopped the walk, and the histogram was read
	// again in order; the reading in order also says what and where the damage is.
	damaged := make([]map[int]bool, workers)
	var latest atomic.Int64 // the last dump the walk has found so far
	var namesErr error
	var done atomic.Int64
	var progressMu sync.Mutex
	idx, err := hprof.ScanSegments(f, st.Size(), hprof.ScanOptions{
		IndexOptions: hprof.IndexOptions{
			SkipUTF8: true,
			Top: func(rec *hprof.Record) error {
				if rec.Tag == hprof.TagLoadClass {
					return schema.Add(rec)
				}
				return nil
			},
			Segment: func(_ *hprof.Index, seg hprof.Segment) error {
				latest.Store(int64(seg.Dump))
				return nil
			},
		},
		Workers: workers,
		// From the page cache the walk is quick, but the workers can hold both cores while it
		// waits for one; from disk it waits on the disk at every hop, and a worker of its own
		// reads meanwhile (the small benchmark dump's histogram from disk took 44 ms with the
		// walker as a worker, against 30).
		WalkerWorks: memory.CachedEnd(f, st.Size()),
		// The class names are read back from the runs of symbols the index noted, on the walk's
		// goroutine, while the other workers count.
		Walked: func(idx *hprof.Index) error {
			schema.IDSize = idx.IDSize
			namesErr = schema.TakeNames(f, idx.UTF8)
			return nil
		},
	}, func(w, _ int, seg hprof.Segment, r *hprof.Reader) error {
		if opt.Dump != 0 && seg.Dump != opt.Dump || opt.Dump == 0 && int64(seg.Dump) < latest.Load() || damaged[w][seg.Dump] {
			return nil
		}
		t := tallies[w][seg.Dump]
		if t == nil {
			if tallies[w] == nil {
				tallies[w] = map[int]*tally{}
			}
			dump := seg.Dump
			t = newTally(r.IDSize, func(rec *hprof.Record) error {
				// Decoded here, on every core, rather than after the count on one.
				cd, err := hprof.DecodeClassDump(rec.ID, rec.Data, r.IDSize, rec.Offset)
				if err != nil {
					return err
				}
				classes[w] = append(classes[w], classRec{off: rec.Offset, dump: dump, cd: cd})
				return nil
			})
			tallies[w][seg.Dump] = t
		}
		r.SkipPrimitiveData = true
		if err := t.segment(r); err != nil {
			if opt.Dump != 0 {
				return err
			}
			if damaged[w] == nil {
				damaged[w] = map[int]bool{}
			}
			damaged[w][seg.Dump] = true
			return nil
		}
		if opt.Progress != nil {
			d := done.Add(seg.Len)
			if d>>24 != (d-seg.Len)>>24 {
				progressMu.Lock()
				opt.Progress(d, st.Size())
				progressMu.Unlock()
			}
		}
		return nil
	})
	if err != nil || namesErr != nil || idx.Dumps == 0 || opt.Dump > idx.Dumps {
		return nil, false
	}
	target := opt.Dump
	if target == 0 {
		target = idx.Dumps
	}
	for _, m := range damaged {
		if m[target] {
			return nil, false // read in order, which says where
		}
	}
	var t *tally
	for _, m := range tallies {
		switch o := m[target]; {
		case o == nil:
		case t == nil:
			t = o
		default:
			t.merge(o)
		}
	}
	if t == nil { // the dump's segments hold no records
		t = newTally(idx.IDSize, nil)
	}
	var all []classRec
	for _, c := range classes {
		for _, r := range c {
			if r.dump == target {
				all = append(all, r)
			}
		}
	}
	slices.SortFunc(all, func(a, b classRec) int { return cmp.Compare(a.off, b.off) })
	schema.ExpectClasses(len(all))
	for _, c := range all {
		schema.AddClassDump(c.cd)
	}
	h := &Histogram{Source: path, Format: "hprof", Dumps: idx.Dumps, DumpIndex: target}
	if err := h.finishDump(path, t, schema, idx.IDSize, opt); err != nil {
		return nil, false
	}
	return h, true
}
