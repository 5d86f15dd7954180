package memory

import (
	"slices"
	"testing"
)

// A column goes out (nil in its owner's hands, in its file only), comes back as a view of the
// same contents, goes out again without a second write, and is handed back to its owner as
// memory of its own or as a view, whichever the owner asks for.
func TestStoreMovesColumnsOutAndBack(t *testing.T) {
	for _, views := range []bool{false, true} {
		b := New(0, t.TempDir())
		s := NewStore(b, true)
		ids, kinds := scrambled(50_000), []uint8{3, 1, 4, 1, 5}
		wantIDs, wantKinds := slices.Clone(ids), slices.Clone(kinds)
		Add(s, "ids", &ids)
		Add(s, "kinds", &kinds)
		if err := s.Out("ids", "kinds"); err != nil {
			t.Fatal(err)
		}
		if ids != nil || kinds != nil {
			t.Fatal("a column out is still in its owner's hands")
		}
		file := s.cols[0].(*storeColumn[uint32]).file
		if err := s.In("ids"); err != nil || !slices.Equal(ids, wantIDs) {
			t.Fatalf("the ids came back as %d elements (err %v), want %d", len(ids), err, len(wantIDs))
		}
		if kinds != nil {
			t.Fatal("In brought back a column it was not asked for")
		}
		if err := s.Out("ids"); err != nil || ids != nil {
			t.Fatalf("the ids did not go out again (err %v)", err)
		}
		if s.cols[0].(*storeColumn[uint32]).file != file {
			t.Fatal("a column going out a second time was written again")
		}
		if err := s.Return(views); err != nil {
			t.Fatal(err)
		}
		s.Close() // the columns returned outlive the store, views or not
		if !slices.Equal(ids, wantIDs) || !slices.Equal(kinds, wantKinds) {
			t.Fatalf("returned columns differ (views %v)", views)
		}
		b.Close()
	}
}

// A dropped column is read no more: its file goes, its view ends, it is not returned, and asking
// for it is an error, whether the store spills or not. A column in memory of its own is left to
// its owner.
func TestStoreDrop(t *testing.T) {
	s := NewStore(New(0, t.TempDir()), true)
	defer s.Close()
	out, viewed, in := scrambled(1000), scrambled(1000), scrambled(1000)
	Add(s, "out", &out)
	Add(s, "viewed", &viewed)
	Add(s, "in", &in)
	if err := s.Out("out", "viewed"); err != nil {
		t.Fatal(err)
	}
	if err := s.In("viewed"); err != nil {
		t.Fatal(err)
	}
	if err := s.Drop("out", "viewed", "in"); err != nil {
		t.Fatal(err)
	}
	for i, c := range s.cols {
		if f := c.(*storeColumn[uint32]).file; f != nil {
			t.Errorf("column %d kept its file once dropped", i)
		}
	}
	if viewed != nil || in == nil {
		t.Fatal("a dropped view is still in its owner's hands, or a column in memory was taken away")
	}
	for _, name := range []string{"out", "viewed", "in"} {
		if err := s.In(name); err == nil {
			t.Errorf("the %s column came back after it was dropped", name)
		}
	}
	if err := s.Return(false); err != nil || out != nil || viewed != nil {
		t.Fatalf("Return handed back a dropped column (err %v)", err)
	}
	if err := s.Drop("no such"); err == nil {
		t.Error("dropping a column the store does not hold did not fail")
	}

	kept := NewStore(nil, false) // moves nothing, but knows what was dropped
	a := scrambled(10)
	Add(kept, "a", &a)
	if err := kept.Out("a"); err != nil || a == nil {
		t.Fatalf("a store that does not spill moved a column out (err %v)", err)
	}
	kept.Drop("a")
	if err := kept.In("a"); err == nil {
		t.Error("a store that does not spill gave back a dropped column")
	}
}

// Closing a store with a column in view (an analysis that failed half-way) leaves its owner nil,
// never an unmapped view.
func TestStoreCloseEndsViews(t *testing.T) {
	s := NewStore(New(0, t.TempDir()), true)
	a, empty := scrambled(100_000), []uint32(nil)
	Add(s, "a", &a)
	Add(s, "empty", &empty)
	if err := s.Out("a", "empty"); err != nil {
		t.Fatal(err)
	}
	if err := s.In("a", "empty"); err != nil || a == nil || empty != nil {
		t.Fatalf("In: err %v; a column nil when it went out should stay nil", err)
	}
	s.Close()
	if a != nil {
		t.Fatal("the column's view outlived the store's Close")
	}
	if err := s.In("missing"); err == nil {
		t.Error("a column the store does not hold came back")
	}
}
