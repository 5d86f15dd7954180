package jar

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"testing"
)

// The pooled inflater reads back what the standard library deflated, entry after entry with
// the inflaters reused, and a read after Close fails instead of reading another entry's data.
func TestPooledInflater(t *testing.T) {
	var entries [][]byte
	for i := range 20 {
		entries = append(entries, bytes.Repeat([]byte(fmt.Sprintf("class %d constant pool ", i)), 200*(i+1)))
	}
	for round := range 3 {
		for i, data := range entries {
			var comp bytes.Buffer
			w, _ := flate.NewWriter(&comp, flate.BestSpeed)
			w.Write(data)
			w.Close()
			r := newInflater(&comp)
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("round %d entry %d: %d bytes, %v; want %d bytes", round, i, len(got), err, len(data))
			}
			if err := r.Close(); err != nil {
				t.Fatalf("round %d entry %d: Close: %v", round, i, err)
			}
			if _, err := r.Read(make([]byte, 1)); !errors.Is(err, errInflaterClosed) {
				t.Fatalf("round %d entry %d: read after Close: %v, want errInflaterClosed", round, i, err)
			}
			if err := r.Close(); err != nil {
				t.Fatalf("round %d entry %d: second Close: %v", round, i, err)
			}
		}
	}
}
