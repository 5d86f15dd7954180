package histogram

import (
	"cmp"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/heapledger/heapledger/analysis/hprof"
)

// classRec is a CLASS DUMP a worker met and decoded, kept until the schema takes them in file
// order (a class dumped twice is described by its last dump, as when reading in order).
type classRec struct {
	off int64
	cd  *hprof.ClassDump
}

// fromSegments computes the histogram of an uncompressed dump by handing its heap-dump segments
// to one worker per core, each with its own tally, merged at the end. It reports false when the
// file is not one it can read that way — gzip, truncated, corrupt — and the caller reads it in
// order instead, which also gives the errors (with offsets) and the partial result.
func fromSegments(path string, f *os.File, opt Options) (*Histogram, bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, false
	}
	// LOAD CLASS records do not depend on the id size; the schema learns it from the index.
	// Only class names are wanted of the symbols, read once the classes are known.
	schema := hprof.NewSchema(8)
	idx, err := hprof.ReadIndexWith(f, st.Size(), hprof.IndexOptions{SkipUTF8: true, Top: func(rec *hprof.Record) error {
		if rec.Tag == hprof.TagLoadClass {
			return schema.Add(rec)
		}
		return nil
	}})
	if err != nil || idx.Dumps == 0 || opt.Dump > idx.Dumps {
		return nil, false
	}
	schema.IDSize = idx.IDSize
	target := opt.Dump
	if target == 0 {
		target = idx.Dumps
	}
	var segs []hprof.Segment
	for _, s := range idx.Segments {
		if s.Dump == target {
			segs = append(segs, s)
		}
	}

	workers := runtime.GOMAXPROCS(0)
	tallies := make([]*tally, workers)
	classes := make([][]classRec, workers)
	for w := range workers {
		tallies[w] = newTally(idx.IDSize, func(rec *hprof.Record) error {
			// Decoded here, on every core, rather than after the count on one.
			cd, err := hprof.DecodeClassDump(rec.ID, rec.Data, idx.IDSize, rec.Offset)
			if err != nil {
				return err
			}
			classes[w] = append(classes[w], classRec{off: rec.Offset, cd: cd})
			return nil
		})
	}
	// The last worker reads the class names back from the runs of symbols the index noted
	// before it counts its first segments; the runs of segments shrink towards the end (see
	// hprof.EachSegment), so the others take up its share. A goroutine of its own, left for the
	// scheduler to place, ran after the count about one time in three.
	var names sync.Once
	var namesErr error
	takeNames := func() { namesErr = schema.TakeClassNames(f, idx.UTF8) }
	var done atomic.Int64
	var progressMu sync.Mutex
	err = hprof.EachSegment(f, idx, segs, workers, func(w, i int, r *hprof.Reader) error {
		if w == workers-1 {
			names.Do(takeNames)
		}
		r.SkipPrimitiveData = true
		if err := tallies[w].segment(r); err != nil {
			return err
		}
		if opt.Progress != nil {
			d := done.Add(segs[i].Len)
			if d>>24 != (d-segs[i].Len)>>24 {
				progressMu.Lock()
				opt.Progress(d, st.Size())
				progressMu.Unlock()
			}
		}
		return nil
	})
	names.Do(takeNames) // with fewer segments than workers, no worker took them
	if err != nil || namesErr != nil {
		return nil, false
	}
	t := tallies[0]
	for _, o := range tallies[1:] {
		t.merge(o)
	}
	all := slices.Concat(classes...)
	slices.SortFunc(all, func(a, b classRec) int { return cmp.Compare(a.off, b.off) })
	for _, c := range all {
		schema.AddClassDump(c.cd)
	}
	h := &Histogram{Source: path, Format: "hprof", Dumps: idx.Dumps, DumpIndex: target}
	if err := h.finishDump(path, t, schema, idx.IDSize, opt); err != nil {
		return nil, false
	}
	return h, true
}
