package heapdump

import (
	"fmt"

	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// parkedCols holds the columns Park moved to temporary files.
type parkedCols struct {
	kind             *memory.Spilled[Kind]
	low, bucket, dir *memory.Spilled[uint32]
	full, words      *memory.Spilled[uint64]
}

// Park moves the object ids and the node kinds to temporary files (see memory.Spilled) until
// Unpark. The graph algorithms read neither: only naming the few objects a report shows does,
// and the id lookup index alone is about a fifth of what a dump holds per object. While parked,
// ObjectID, Node, Describe, EdgeNames and Kind must not be used; IsClassObject and ClassName may.
func (d *Dump) Park() {
	if d.parked != nil {
		return
	}
	p := &parkedCols{}
	p.kind, d.Kind = memory.Spill(d.mem, d.Kind), nil
	x := &d.ids
	if x.full != nil {
		p.full, x.full = memory.Spill(d.mem, x.full), nil
	}
	// Where the ranks find the nodes, the low bits are not needed again (see dropLow).
	x.dropLow()
	if x.low != nil {
		p.low, x.low = memory.Spill(d.mem, x.low), nil
	}
	if x.bucket != nil {
		p.bucket, x.bucket = memory.Spill(d.mem, x.bucket), nil
	}
	if x.ranks.dir != nil {
		p.dir, x.ranks.dir = memory.Spill(d.mem, x.ranks.dir), nil
		p.words, x.ranks.words = memory.Spill(d.mem, x.ranks.words), nil
	}
	d.parked = p
}

// Unpark brings back what Park moved out.
func (d *Dump) Unpark() error { return d.unpark(false) }

// UnparkViews is Unpark for a caller that names a few objects and ends, such as a command
// printing a report: the columns come back as read-only views of their files, never unmapped
// (memory.Spilled.View), whose pages are read in only as the lookups need them. The Dump must
// not be changed afterwards.
func (d *Dump) UnparkViews() error { return d.unpark(true) }

func (d *Dump) unpark(view bool) error {
	p := d.parked
	if p == nil {
		return nil
	}
	d.parked = nil
	var err error
	x := &d.ids
	x.low = restore(p.low, d.Path, "object ids", view, &err)
	x.full = restore(p.full, d.Path, "object ids", view, &err)
	x.bucket = restore(p.bucket, d.Path, "object id index", view, &err)
	x.ranks.dir = restore(p.dir, d.Path, "object id index", view, &err)
	x.ranks.words = restore(p.words, d.Path, "object id index", view, &err)
	d.Kind = restore(p.kind, d.Path, "node kinds", view, &err)
	return err
}

// restore reads back what s holds (nil for nil), or views it, unless *err is set already; an
// error it meets goes in *err, naming the dump at path and what the column holds.
func restore[T ~uint8 | ~uint32 | ~uint64](s *memory.Spilled[T], path, what string, view bool, err *error) []T {
	if s == nil || *err != nil {
		return nil
	}
	var a []T
	var e error
	if view {
		a, e = s.View()
	} else {
		a, e = s.Restore(nil)
	}
	if e != nil {
		*err = fmt.Errorf("%s: %s: %w", path, what, e)
	}
	return a
}
