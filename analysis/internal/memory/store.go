package memory

import (
	"errors"
	"fmt"
	"slices"
)

// Store holds the columns of an analysis (the graph's edges, offsets and sizes, the class of each
// object, the object ids, ...) and knows where each is: in, in memory of its own; out, in its file
// with nothing of it mapped, so that none of it is resident; viewed, back as a read-only view of
// its file, whose pages are the page cache's; or dropped, read no more by anyone. As Eclipse
// MAT's index manager unloads an index once a phase is done with it, a step here says which
// columns it no longer reads (Out), which it reads again (In) and which no one reads again (Drop).
//
// A column is written out once, the first time it goes out, and keeps its file: the analysis
// changes no column the store holds, so going out again only ends its view. A store that may
// not spill (New's spill false) moves nothing and only keeps the accounts.
//
// Each column lives in its owner's variable (Add takes its address): the store sets it to nil
// while the column is out and to the view when it is back, so the owner must hold no other
// reference to the array for the memory to be freed.
type Store struct {
	b     *Budget
	spill bool
	cols  []column
}

// place is where a column is.
type place uint8

const (
	placeIn      place = iota // in memory of its own
	placeOut                  // in its file only
	placeViewed               // a read-only view of its file
	placeDropped              // read no more
)

// column is a storeColumn of any element type, as the store handles it.
type column interface {
	name() string
	state() place
	out()
	view() error
	own(view bool) error
	drop()
	close()
}

// NewStore returns a store whose columns go to b's files; with spill false it moves none.
func NewStore(b *Budget, spill bool) *Store { return &Store{b: b, spill: spill} }

// Spills reports whether the store moves columns out.
func (s *Store) Spills() bool { return s != nil && s.spill }

// Add puts the column held in *a, named name for messages, in the store's care. A column that is
// nil when it would go out (an input without classes, an index the dump does not need) stays
// as it is, and is never asked back.
func Add[T ~uint8 | ~uint32 | ~uint64](s *Store, name string, a *[]T) {
	s.cols = append(s.cols, &storeColumn[T]{label: name, a: a, b: s.b})
}

// storeColumn is one column of a Store.
type storeColumn[T ~uint8 | ~uint32 | ~uint64] struct {
	label string
	a     *[]T
	b     *Budget
	file  *Spilled[T]
	// parked is the column while it is out, when it is a paged array (see Budget.Page): its
	// pages are its file's already, and going out only sets them aside, with no copy.
	parked []T
	st     place
}

// find returns the columns named, failing for a name the store does not hold.
func (s *Store) find(names []string) ([]column, error) {
	var out []column
	for _, n := range names {
		i := slices.IndexFunc(s.cols, func(c column) bool { return c.name() == n })
		if i < 0 {
			return nil, fmt.Errorf("memory: no column %q in the store", n)
		}
		out = append(out, s.cols[i])
	}
	return out, nil
}

// In brings the columns named back, as views, leaving the others as they are.
func (s *Store) In(names ...string) error {
	want, err := s.find(names)
	if err != nil {
		return err
	}
	if !s.Spills() {
		return dropped(want)
	}
	return s.bring(want)
}

func (s *Store) bring(cols []column) error {
	var errs []error
	for _, c := range cols {
		errs = append(errs, c.view())
	}
	return errors.Join(errs...)
}

// dropped fails for a dropped column among cols: a phase asked for what was let go.
func dropped(cols []column) error {
	for _, c := range cols {
		if c.state() == placeDropped {
			return fmt.Errorf("memory: the %s: asked for after they were let go", c.name())
		}
	}
	return nil
}

// Out moves the columns named out, leaving the others as they are.
func (s *Store) Out(names ...string) error {
	cols, err := s.find(names)
	if err != nil || !s.Spills() {
		return err
	}
	for _, c := range cols {
		c.out()
	}
	return nil
}

// Drop lets the columns named go: no phase reads them again and no one wants them back, so a
// column out closes its file (whose page cache goes at once, in one piece, for the next arrays
// to take) and a view ends. A column in memory of its own stays with its owner, for the garbage
// collector.
func (s *Store) Drop(names ...string) error {
	cols, err := s.find(names)
	for _, c := range cols {
		c.drop()
	}
	return err
}

// Return hands every column not dropped back to its owner, as memory of its own or, with views,
// as read-only views of their files that outlive the store (for an owner that reads a few
// elements of them and ends); the store must be closed afterwards.
func (s *Store) Return(views bool) error {
	var errs []error
	for _, c := range s.cols {
		errs = append(errs, c.own(views))
	}
	return errors.Join(errs...)
}

// Close closes every column's file and ends the views the store gave, but those Return gave.
func (s *Store) Close() {
	for _, c := range s.cols {
		c.close()
	}
}

func (c *storeColumn[T]) name() string { return c.label }
func (c *storeColumn[T]) state() place { return c.st }
func (c *storeColumn[T]) out() {
	switch c.st {
	case placeIn:
		if *c.a == nil {
			return
		}
		if p, ok := pagedOf(c.b, *c.a); ok {
			setAside(p)
			c.parked = *c.a
		} else if c.file == nil {
			c.file = Spill(c.b, *c.a)
		}
	case placeViewed:
		if p, ok := pagedOf(c.b, c.parked); ok {
			setAside(p)
		} else {
			c.file.Unmap()
		}
	default:
		return
	}
	*c.a, c.st = nil, placeOut
}

func (c *storeColumn[T]) view() error {
	switch c.st {
	case placeOut:
	case placeDropped:
		return fmt.Errorf("memory: the %s: asked for after they were let go", c.label)
	default:
		return nil
	}
	if c.parked != nil {
		*c.a, c.st = c.parked, placeViewed
		return nil
	}
	v, err := c.file.Map()
	if err != nil {
		return fmt.Errorf("memory: the %s: %w", c.label, err)
	}
	*c.a, c.st = v, placeViewed
	return nil
}

// own brings the column back as memory of its own or (view) as a view that outlives the file;
// a paged column comes back as it is.
func (c *storeColumn[T]) own(view bool) error {
	if c.st != placeOut && c.st != placeViewed {
		return nil
	}
	if c.parked != nil {
		*c.a, c.parked, c.st = c.parked, nil, placeIn
		return nil
	}
	var v []T
	var err error
	if view {
		c.file.Unmap()
		v, err = c.file.View()
		c.file = nil
	} else {
		v, err = c.file.Load(nil)
		c.file.Unmap()
	}
	if err != nil {
		return fmt.Errorf("memory: the %s: %w", c.label, err)
	}
	*c.a, c.st = v, placeIn
	return nil
}

func (c *storeColumn[T]) drop() {
	switch c.st {
	case placeViewed:
		*c.a = nil
		fallthrough
	case placeOut:
		if c.parked != nil {
			Release(c.b, c.parked) // its file's blocks and page cache go at once
			c.parked = nil
		} else {
			c.file.Close()
			c.file = nil
		}
	}
	c.st = placeDropped
}

// close lets the file go; a view of it ends with it, so the owner's variable is nil then
// rather than an unmapped slice. A paged column's file is its budget's, which closes it.
func (c *storeColumn[T]) close() {
	if c.st == placeViewed {
		*c.a = nil
		c.st = placeOut
	}
	c.parked = nil
	if c.file != nil {
		c.file.Close()
		c.file = nil
	}
}
