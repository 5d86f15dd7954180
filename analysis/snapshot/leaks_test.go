package snapshot

import (
	"fmt"
	"strings"
	"testing"
)

// snap builds a version-2 snapshot with one row per (site, live) pair, all in account 1.
func snap(uptime int, live map[int]int64) *Snapshot {
	var b strings.Builder
	fmt.Fprintf(&b, "# heapledger snapshot 2\nreason\tdemand\npid\t1\nuptime_ms\t%d\naccount\t1\tcom.acme\n", uptime)
	for site := 1; site <= 3; site++ {
		fmt.Fprintf(&b, "site\t%d\tobject\tT%d\tcom.acme.M.m()V\t%d\t-1\n", site, site, site)
	}
	for site := 1; site <= 3; site++ {
		l := live[site]
		fmt.Fprintf(&b, "alloc\t1\t%d\t0\t%d\t0\t%d\t%d\t%d\t0\t0\t0\t%d\n", site, 1000, 16000, l, 16*l, 1)
	}
	b.WriteString("end\n")
	return mustRead(b.String(), fmt.Sprintf("snap@%d", uptime))
}

// mustRead reads a snapshot the test wrote, naming it path.
func mustRead(text, path string) *Snapshot {
	s, err := Read(strings.NewReader(text))
	if err != nil {
		panic(err)
	}
	s.Path = path
	return s
}

func TestLeaksFindsGrowthNotPlateaus(t *testing.T) {
	// site 1 leaks steadily; site 2 is a cache that grows and levels off; site 3 dies young.
	var snaps []*Snapshot
	leak := []int64{10, 20, 30, 40, 50, 60}
	cache := []int64{10, 50, 100, 100, 100, 100}
	young := []int64{5, 0, 7, 1, 3, 0}
	for i := range leak {
		snaps = append(snaps, snap(1000*(i+1), map[int]int64{1: leak[i], 2: cache[i], 3: young[i]}))
	}
	// given out of order: sorted by uptime
	snaps[0], snaps[3] = snaps[3], snaps[0]
	got, warns, err := Leaks(snaps, DefaultLeakOptions)
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	if len(got) != 1 || got[0].Type != "T1" || got[0].Account != "com.acme" {
		t.Fatalf("want only the steady leak at site 1: %+v", got)
	}
	if got[0].Grew != 5 || got[0].Intervals != 5 || got[0].PerSnapshot != 10 || got[0].Slope != 10 {
		t.Errorf("metrics %+v", got[0])
	}
}

func TestLeaksNeedsLiveness(t *testing.T) {
	s1, _ := Read(strings.NewReader(sample))
	s2, _ := Read(strings.NewReader(sample))
	s1.Path = "a"
	if _, _, err := Leaks([]*Snapshot{s1, s2}, DefaultLeakOptions); err == nil || !strings.Contains(err.Error(), "liveness") {
		t.Errorf("version-1 snapshots have no liveness: %v", err)
	}
	if _, _, err := Leaks([]*Snapshot{s1}, DefaultLeakOptions); err == nil {
		t.Error("one snapshot accepted")
	}
}
