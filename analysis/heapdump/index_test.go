package heapdump

import (
	"math/rand"
	"slices"
	"testing"
)

// The compact ids must give back every id exactly and find every node by id — across 4 GB
// boundaries of the id range, with duplicate ids, through the ranks and through the coarse
// table, and in the whole-id form for sparse ids — and find nothing for ids that are absent;
// keep must renumber them as dropUnreachable does.
func TestObjectIDs(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	byRanks := 0
	for round := 0; round < 600; round++ {
		n := 1 + r.Intn(200)
		ids := []uint64{0}
		gap := []uint64{8, 1 << 20, 1 << 31, 1 << 33, 1 << 40}[round%5]
		id := uint64(r.Int63n(1 << 40))
		if round%7 == 0 {
			id = ^uint64(0) - uint64(n)*gap // near the top of the range
		}
		// Ids aligned as a heap's objects are (to 8 or 16 bytes), in regions far apart.
		align := uint64(1) << (round / 2 % 5)
		id &^= align - 1
		dups := round%3 == 0
		for i := 1; i < n; i++ {
			ids = append(ids, id)
			if !dups || r.Intn(10) > 0 { // now and then a duplicate id
				step := 1 + uint64(r.Int63n(int64(gap)))
				if round%4 == 1 && round%7 != 0 && r.Intn(20) == 0 {
					step += uint64(r.Int63n(1 << 30)) // the next region
				}
				id += (step + align - 1) &^ (align - 1)
			}
		}
		x := newObjectIDs(nil, ids)
		if x.ranks.dir != nil {
			byRanks++
		}
		for i := range ids {
			if got := x.at(uint32(i)); got != ids[i] {
				t.Fatalf("round %d: id of node %d = %#x, want %#x", round, i, got, ids[i])
			}
		}
		for i := 1; i < len(ids); i++ {
			first := slices.Index(ids[1:], ids[i]) + 1
			if got, ok := x.find(ids[i]); !ok || got != uint32(first) {
				t.Fatalf("round %d: find(%#x) = %d, %v; want node %d", round, ids[i], got, ok, first)
			}
			for _, probe := range []uint64{ids[i] - 1, ids[i] + 1, ids[i] ^ 1<<32} {
				if _, found := slices.BinarySearch(ids[1:], probe); !found {
					if got, ok := x.find(probe); ok {
						t.Fatalf("round %d: find(%#x) = node %d, but no node has that id", round, probe, got)
					}
				}
			}
		}
		// Where the ranks find the nodes, the ids' offsets are never made: the ranks alone gave
		// every id back above.
		if x.ranks.dir != nil && x.low != nil {
			t.Fatalf("round %d: the low bits were made beside the ranks", round)
		}
		kept := newBitset(len(ids))
		want := []uint64{0}
		var dropped []uint64
		for i := 1; i < len(ids); i++ {
			// Most rounds keep nearly all, as a dump does; some drop a third.
			if (round%2 == 0 && r.Intn(3) > 0) || (round%2 == 1 && r.Intn(50) > 0) {
				kept.set(uint32(i))
				want = append(want, ids[i])
			} else {
				dropped = append(dropped, ids[i])
			}
		}
		x.keep(kept)
		if x.n != len(want) {
			t.Fatalf("round %d: %d nodes kept, want %d", round, x.n, len(want))
		}
		y := x
		y.dropLow()
		for i := range want {
			if got := x.at(uint32(i)); got != want[i] {
				t.Fatalf("round %d: after keep, id of node %d = %#x, want %#x", round, i, got, want[i])
			}
			if got := y.at(uint32(i)); got != want[i] {
				t.Fatalf("round %d: after keep, with the low bits dropped, id of node %d = %#x, want %#x", round, i, got, want[i])
			}
			if i > 0 {
				if got, ok := x.find(want[i]); !ok || x.at(got) != want[i] {
					t.Fatalf("round %d: after keep, find(%#x) = %d, %v", round, want[i], got, ok)
				}
			}
		}
		for _, id := range dropped {
			if _, alsoKept := slices.BinarySearch(want[1:], id); !alsoKept {
				if got, ok := x.find(id); ok {
					t.Fatalf("round %d: after keep, find(%#x) of a dropped node = %d", round, id, got)
				}
			}
		}
	}
	if byRanks < 50 {
		t.Fatalf("only %d rounds of 600 found nodes through the ranks", byRanks)
	}
}
