package frames

import "testing"

// FuzzDecode feeds arbitrary bytes to the StackMapTable reader: it must return frames or an
// error, never panic, and whatever it accepts must encode and decode to the same frames.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0, 8, 5, 64, 1, 251, 0, 193, 64, 4, 253, 0, 98, 4, 2, 248, 0, 0, 247, 0, 98, 5, 255, 0, 0, 0, 2, 0, 6, 0, 2, 8, 0, 7, 3})
	f.Add([]byte{0, 1, 64, 7, 0, 2})
	f.Add([]byte{0, 2, 252, 0, 3, 4, 250, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		pool := newPool()
		if _, err := pool.AddClass("p/C"); err != nil {
			t.Fatal(err)
		}
		initial := Frame{Locals: []Type{ObjectType("p/C"), IntType, LongType, TopType}}
		lim := Limits{CodeLength: 1000, MaxLocals: 50, MaxStack: 50}
		es, err := Decode(data, pool, initial, lim)
		if err != nil {
			return
		}
		out, err := Encode(es, initial, pool)
		if err != nil {
			t.Fatalf("accepted frames do not encode: %v", err)
		}
		again, err := Decode(out, pool, initial, lim)
		if err != nil {
			t.Fatalf("re-encoded frames do not decode: %v", err)
		}
		if err := sameEntries(again, es); err != nil {
			t.Fatal(err)
		}
	})
}
