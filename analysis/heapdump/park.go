package heapdump

import (
	"fmt"

	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// parkedCols holds the columns Park moved to temporary files.
type parkedCols struct {
	kind        *heapgraph.Spilled[Kind]
	low, bucket *heapgraph.Spilled[uint32]
	full        *heapgraph.Spilled[uint64]
}

// Park moves the object ids and the node kinds to temporary files (see heapgraph.Spilled) until
// Unpark. The graph algorithms read neither: only naming the few objects a report shows does,
// and the id lookup index alone is about a fifth of what a dump holds per object. While parked,
// ObjectID, Node, Describe, EdgeNames and Kind must not be used; IsClassObject and ClassName may.
func (d *Dump) Park() {
	if d.parked != nil {
		return
	}
	p := &parkedCols{}
	p.kind, d.Kind = heapgraph.Spill(d.Kind), nil
	x := &d.ids
	if x.full != nil {
		p.full, x.full = heapgraph.Spill(x.full), nil
	}
	if x.low != nil {
		p.low, x.low = heapgraph.Spill(x.low), nil
	}
	if x.bucket != nil {
		p.bucket, x.bucket = heapgraph.Spill(x.bucket), nil
	}
	d.parked = p
}

// Unpark brings back what Park moved out.
func (d *Dump) Unpark() error {
	p := d.parked
	if p == nil {
		return nil
	}
	d.parked = nil
	var err error
	u32 := func(s *heapgraph.Spilled[uint32], what string) []uint32 {
		if s == nil || err != nil {
			return nil
		}
		a, e := s.Restore(nil)
		if e != nil {
			err = fmt.Errorf("%s: %s: %w", d.Path, what, e)
		}
		return a
	}
	x := &d.ids
	x.low = u32(p.low, "object ids")
	x.bucket = u32(p.bucket, "object id index")
	if p.full != nil && err == nil {
		a, e := p.full.Restore(nil)
		if e != nil {
			err = fmt.Errorf("%s: object ids: %w", d.Path, e)
		}
		x.full = a
	}
	if err == nil {
		if d.Kind, err = p.kind.Restore(nil); err != nil {
			return fmt.Errorf("%s: node kinds: %w", d.Path, err)
		}
	}
	return err
}
