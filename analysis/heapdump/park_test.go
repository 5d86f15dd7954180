package heapdump

import (
	"slices"
	"testing"

	"github.com/heapledger/heapledger/fixtures/heapdumps"
)

// Parking moves the ids and kinds to temporary files; what comes back must be what went out,
// and the class-object test must not need them meanwhile.
func TestParkRoundTrips(t *testing.T) {
	d, err := Load(heapdumps.Dump(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids, kinds := d.ObjectIDs(), slices.Clone(d.Kind)
	var names []string
	for n := range kinds {
		names = append(names, d.Describe(uint32(n)))
	}
	d.Park()
	d.Park() // a second call changes nothing
	if d.Kind != nil || d.ids.low != nil || d.ids.full != nil {
		t.Fatal("Park left the columns in memory")
	}
	for n, k := range kinds {
		if d.IsClassObject(uint32(n)) != (k == KindClass) {
			t.Fatalf("IsClassObject(%d) = %v while parked, kind %v", n, d.IsClassObject(uint32(n)), k)
		}
	}
	if err := d.Unpark(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.ObjectIDs(), ids) || !slices.Equal(d.Kind, kinds) {
		t.Fatal("ids or kinds came back changed")
	}
	for n, want := range names {
		if got := d.Describe(uint32(n)); got != want {
			t.Fatalf("node %d is %q after Unpark, was %q", n, got, want)
		}
		if id := ids[n]; n > 0 {
			if m, ok := d.Node(id); !ok || d.ObjectID(m) != id {
				t.Fatalf("id 0x%x is not found again after Unpark", id)
			}
		}
	}
	if err := d.Unpark(); err != nil {
		t.Fatalf("a second Unpark: %v", err)
	}
}
