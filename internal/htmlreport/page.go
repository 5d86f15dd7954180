// Package htmlreport writes heapledger's HTML report: one self-contained file, working
// offline, with per-account totals, interactive flame graphs of allocated and live memory,
// the accounts' live bytes over time with the growing sites of several snapshots, and a heap
// dump's analysis. The page is drawn in the browser by d3-flame-graph (on d3) and uPlot, whose
// minified files the binary embeds (assets/vendor, with their licences); the data is one JSON
// document in the page (Page), which assets/report.js reads.
package htmlreport

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/analysis/stacks"
)

// Page is everything the report shows, as the page's script reads it.
type Page struct {
	Title     string `json:"title"`
	Generated string `json:"generated"` // when the report was written, RFC 3339
	Version   string `json:"version"`   // heapledger's
	// Snapshots are in time order; Latest is the one the totals and flame graphs are of.
	Snapshots []SnapshotInfo   `json:"snapshots"`
	Latest    int              `json:"latest"`
	Report    *snapshot.Report `json:"report,omitempty"`
	Profile   *Profile         `json:"profile,omitempty"`
	OverTime  *OverTime        `json:"over_time,omitempty"`
	Growing   *Growing         `json:"growing,omitempty"`
	// Heap is the analysis of a heap dump as `heapledger heap analyze --json` prints it.
	Heap any `json:"heap,omitempty"`
}

// SnapshotInfo names a snapshot the report was made from.
type SnapshotInfo struct {
	Path     string `json:"path"`
	Program  string `json:"program"`
	PID      string `json:"pid"`
	Reason   string `json:"reason"`
	Time     string `json:"time"`
	UptimeMS int64  `json:"uptime_ms"` // -1 when unknown
	Liveness string `json:"liveness"`
}

// Profile is the latest snapshot's allocation profile as a flame-graph tree.
type Profile struct {
	Types    []stacks.ValueType `json:"types"`
	Default  string             `json:"default"`
	Comments []string           `json:"comments"`
	Flame    *stacks.Node       `json:"flame"`
}

// OverTime is one series per account, a point per snapshot.
type OverTime struct {
	// Measure is live_bytes when every snapshot knows its live objects, else bytes (allocated
	// since the start, which only grows).
	Measure string `json:"measure"`
	// X is each snapshot's time in Unix seconds when XIsTime, else its uptime in seconds.
	X        []float64       `json:"x"`
	XIsTime  bool            `json:"x_is_time"`
	Accounts []AccountSeries `json:"accounts"`
}

// AccountSeries is an account's figure in each snapshot (0 where it had none yet).
type AccountSeries struct {
	Name   string  `json:"name"`
	Values []int64 `json:"values"`
}

// Growing is the leaks ranking (heapledger leaks) of the snapshots.
type Growing struct {
	Leaks    []snapshot.Leak `json:"leaks"`
	Total    int             `json:"total"` // ranked, of which Leaks are the first
	Warnings []string        `json:"warnings"`
	Error    string          `json:"error,omitempty"` // why there is no ranking
}

// Options of a report.
type Options struct {
	Title   string
	Version string
	// Top is how many growing sites the page lists (0: all) and how long each top list of the
	// accounts is.
	Top int
	// Lines gives method frames their line, so that a method's sites stay apart.
	Lines bool
	// MixedRuns ranks snapshots of different runs together (leaks --force).
	MixedRuns bool
	// Now stamps the report (time.Now when zero).
	Now time.Time
}

// Build makes the page of snaps: several of one run give the series over time and the growing
// sites; none, a page for a heap dump alone (the caller sets Heap).
func Build(snaps []*snapshot.Snapshot, opt Options) (*Page, error) {
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	p := &Page{Title: opt.Title, Version: opt.Version, Latest: -1, Generated: now.UTC().Format(time.RFC3339), Snapshots: []SnapshotInfo{}}
	if len(snaps) == 0 {
		return p, nil
	}
	ordered := inTimeOrder(snaps)
	latest := ordered[len(ordered)-1]
	p.Latest, p.Report = len(ordered)-1, latest.Summarize(opt.Top)
	for _, s := range ordered {
		up, err := strconv.ParseInt(s.Header["uptime_ms"], 10, 64)
		if err != nil {
			up = -1
		}
		p.Snapshots = append(p.Snapshots, SnapshotInfo{Path: s.Path, Program: s.Header["program"], PID: s.Header["pid"],
			Reason: s.Header["reason"], Time: s.Header["time"], UptimeMS: up, Liveness: s.Header["liveness"]})
	}
	prof := stacks.FromSnapshot(latest)
	tree, err := prof.Flame(stacks.StackOptions{Accounts: true, Lines: opt.Lines})
	if err != nil {
		return nil, err
	}
	p.Profile = &Profile{Types: prof.Types, Default: prof.Default, Comments: prof.Comments, Flame: tree}
	if len(ordered) > 1 {
		p.OverTime = overTime(ordered)
		p.Growing = growing(ordered, opt)
	}
	return p, nil
}

// inTimeOrder orders the snapshots of one run by uptime, as leaks does, and those of several
// runs by the wall-clock time they were taken.
func inTimeOrder(snaps []*snapshot.Snapshot) []*snapshot.Snapshot {
	out := slices.Clone(snaps)
	oneRun := true
	for _, s := range out {
		oneRun = oneRun && s.Header["pid"] == out[0].Header["pid"] && s.Header["program"] == out[0].Header["program"]
	}
	uptime := func(s *snapshot.Snapshot) int64 {
		n, err := strconv.ParseInt(s.Header["uptime_ms"], 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	slices.SortStableFunc(out, func(a, b *snapshot.Snapshot) int {
		if !oneRun {
			ta, _ := time.Parse(time.RFC3339Nano, a.Header["time"])
			tb, _ := time.Parse(time.RFC3339Nano, b.Header["time"])
			if c := ta.Compare(tb); c != 0 {
				return c
			}
		}
		return cmp.Compare(uptime(a), uptime(b))
	})
	return out
}

// overTime is each account's live bytes (or allocated bytes, without liveness) per snapshot.
func overTime(snaps []*snapshot.Snapshot) *OverTime {
	o := &OverTime{Measure: "live_bytes", XIsTime: true}
	for _, s := range snaps {
		if !s.Liveness {
			o.Measure = "bytes"
		}
		if _, err := time.Parse(time.RFC3339Nano, s.Header["time"]); err != nil {
			o.XIsTime = false
		}
	}
	index := map[string]int{}
	for i, s := range snaps {
		if o.XIsTime {
			t, _ := time.Parse(time.RFC3339Nano, s.Header["time"])
			o.X = append(o.X, float64(t.UnixMilli())/1000)
		} else {
			ms, _ := strconv.ParseInt(s.Header["uptime_ms"], 10, 64)
			o.X = append(o.X, float64(ms)/1000)
		}
		for _, a := range s.Summarize(1).Accounts {
			k, ok := index[a.Name]
			if !ok {
				k = len(o.Accounts)
				index[a.Name] = k
				o.Accounts = append(o.Accounts, AccountSeries{Name: a.Name, Values: make([]int64, len(snaps))})
			}
			v := a.Totals.Bytes
			if o.Measure == "live_bytes" {
				v = a.Totals.LiveBytes
			}
			o.Accounts[k].Values[i] = v
		}
	}
	// Largest at the last snapshot first: the legend then reads as the ranking does.
	slices.SortStableFunc(o.Accounts, func(a, b AccountSeries) int {
		return cmp.Compare(b.Values[len(b.Values)-1], a.Values[len(a.Values)-1])
	})
	return o
}

// growing ranks the growing sites as heapledger leaks does, or says why it cannot.
func growing(snaps []*snapshot.Snapshot, opt Options) *Growing {
	lo := snapshot.DefaultLeakOptions
	lo.MixedRuns = opt.MixedRuns
	leaks, warnings, err := snapshot.Leaks(snaps, lo)
	g := &Growing{Leaks: leaks, Total: len(leaks), Warnings: warnings}
	if g.Warnings == nil {
		g.Warnings = []string{}
	}
	if err != nil {
		g.Error = err.Error()
		g.Leaks = []snapshot.Leak{}
		return g
	}
	if opt.Top > 0 && len(g.Leaks) > opt.Top {
		g.Leaks = g.Leaks[:opt.Top]
	}
	if g.Leaks == nil {
		g.Leaks = []snapshot.Leak{}
	}
	return g
}
