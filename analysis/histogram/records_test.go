package histogram

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
)

// tallyOf counts a dump's segments with segment readers of the given buffer size: as the
// histogram does (segment: records from the buffer, Next for the rest) when fast, else through
// add on every record, also counting instances by class in a plain map, apart from idCounts and
// its caches.
func tallyOf(t *testing.T, data []byte, buf int, fast bool) (*tally, map[uint64]uint64) {
	t.Helper()
	ra := bytes.NewReader(data)
	idx, err := hprof.ReadIndex(ra, int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	tl := newTally(idx.IDSize, func(*hprof.Record) error { return nil })
	plain := map[uint64]uint64{}
	for _, s := range idx.Segments {
		r := hprof.NewSegmentReader(ra, idx, s, make([]byte, buf))
		r.SkipPrimitiveData = true
		if fast {
			if err := tl.segment(r); err != nil {
				t.Fatal(err)
			}
			continue
		}
		hproftest.Records(t, r, func(rec *hprof.Record) {
			if err := tl.add(rec); err != nil {
				t.Fatal(err)
			}
			if rec.Tag == hprof.TagInstanceDump {
				plain[rec.Class]++
			}
		})
	}
	return tl, plain
}

func countsOf(c *idCounts) map[uint64]uint64 {
	m := map[uint64]uint64{}
	c.each(func(id, n uint64) { m[id] += n })
	return m
}

// The histogram's own loop over buffered records must count exactly what decoding every record
// counts: instances of classes that alternate, repeat and come back (the two-class cache), more
// classes than the table first holds (its growth), primitive arrays of every type, and records
// cut by the end of a small buffer.
func TestRecordsCountAsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := hproftest.New(8)
	const classes = 1500
	for c := range uint64(classes) {
		b.LoadClass(0x1000+c*8, "C"+string(rune('a'+c%26)))
	}
	b.StartSegment(false)
	for c := range uint64(classes) {
		b.Class(0x1000+c*8, 0, "", []hproftest.Field{{Name: "v", Type: hprof.TypeInt}}, nil)
	}
	b.EndSegment()
	id := uint64(0x100000)
	// One class, then a class not seen yet, in turn: the table grows on a new class, and the
	// next record is the class before it.
	b.StartSegment(false)
	for c := range uint64(classes) {
		id += 16
		b.Instance(id, 0x1000, 0)
		b.Instance(id+8, 0x1000+c*8, 0)
	}
	b.EndSegment()
	prims := []hprof.Type{hprof.TypeBoolean, hprof.TypeByte, hprof.TypeChar, hprof.TypeShort, hprof.TypeFloat, hprof.TypeInt, hprof.TypeDouble, hprof.TypeLong}
	for range 6 {
		b.StartSegment(false)
		for range 2000 {
			id += 8 * uint64(1+rng.IntN(4))
			switch k := rng.IntN(10); {
			case k < 4: // two classes in turn
				b.Instance(id, 0x1000+8*uint64(id/8%2), id)
			case k < 7:
				b.Instance(id, 0x1000+8*uint64(rng.IntN(classes)), 0)
			case k < 8:
				b.ObjArray(id, 0x1000, id-8, 0)
			default:
				b.PrimArray(id, prims[rng.IntN(len(prims))], rng.IntN(40))
			}
		}
		b.EndSegment()
	}
	b.EndDump()
	data := b.Bytes()
	want, plain := tallyOf(t, data, 1<<20, false)
	if w := countsOf(&want.counts); !reflect.DeepEqual(w, plain) {
		t.Fatalf("counting every record: %d classes counted differ from a plain count of %d", len(w), len(plain))
	}
	for _, buf := range []int{64, 100, 333, 4096, 1 << 20} {
		got, _ := tallyOf(t, data, buf, true)
		if g := countsOf(&got.counts); !reflect.DeepEqual(g, plain) {
			t.Errorf("buffer %d: instance counts differ (%d classes, want %d)", buf, len(g), len(plain))
		}
		if got.prims != want.prims || got.minID != want.minID || got.maxID != want.maxID || len(got.arrays) != len(want.arrays) {
			t.Errorf("buffer %d: arrays or id range differ: %v %x-%x, want %v %x-%x", buf, got.prims, got.minID, got.maxID, want.prims, want.minID, want.maxID)
		}
	}
	if len(plain) < 1000 {
		t.Fatalf("only %d classes counted: the table never grew", len(plain))
	}
}
