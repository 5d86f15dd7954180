package snapshot

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// LeakOptions tunes which growing rows count as leaks.
type LeakOptions struct {
	// MinShare is the smallest share of intervals in which the live count must have grown.
	MinShare float64
	// MinGrowth is the smallest rise of the live count from the first to the last snapshot.
	MinGrowth int64
	// MixedRuns ranks snapshots of different programs or processes together, with a warning,
	// instead of refusing them with ErrDifferentRuns.
	MixedRuns bool
}

// ErrDifferentRuns is the error (wrapped) of Leaks for snapshots of different programs or
// processes: their live counts are no one series, and uptimes of different processes do not
// order them.
var ErrDifferentRuns = errors.New("the snapshots come from different runs")

// DefaultLeakOptions: growth in at least half the intervals, by at least one object.
var DefaultLeakOptions = LeakOptions{MinShare: 0.5, MinGrowth: 1}

// Leak is one (account, site, part) whose live count keeps growing.
type Leak struct {
	Account     string  `json:"account"` // the principal charged: the nearest accounted method on the stack
	Type        string  `json:"type"`
	Site        string  `json:"site"`
	Live        []int64 `json:"live"`       // settled live objects in each snapshot (Snapshot.SettledLive), in time order
	LiveBytes   []int64 `json:"live_bytes"` // live bytes in each snapshot (-1 unknown)
	Slope       float64 `json:"slope_per_s"`
	PerSnapshot float64 `json:"slope_per_snapshot"`
	Grew        int     `json:"intervals_grown"`
	Intervals   int     `json:"intervals"`
	Generations int64   `json:"generations"`
	// Hook marks a class's init row of the Object.<init> hook (--object-init). Its live counts
	// are those no site naming the class counted (the init row's live objects less those of
	// the class's object and concat sites, clamped at 0), so a leak such a site shows is not
	// listed again; objects of reflect and lambda sites, which name no class, can be.
	Hook bool `json:"object_init_hook,omitempty"`
}

// HookLeakSite is the Site of a Hook leak.
const HookLeakSite = "<Object.<init>>, not at a site naming the class"

// NoLivenessError is a snapshot without liveness data given to Leaks: its program was rewritten
// or run without tracking which objects live, so nothing can be said to leak.
type NoLivenessError struct{ Path string }

func (e *NoLivenessError) Error() string { return e.Path + " has no liveness data" }

// Leaks ranks the rows whose live count keeps rising across snapshots (two or more, of one
// program), largest rise in bytes first. A row qualifies when its live count rose overall, by
// more than it ever fell from one snapshot to the next, rose in at least MinShare of the
// intervals, and still rose in the last third of them — so a cache that grew and then levelled
// off is not a leak, nor a count that comes and goes. The steps:
//  1. the snapshots must all have liveness data and be of one run (sameRun), and are put in
//     the order of their uptimes, those that cannot be compared left out (comparable);
//  2. each row's series of settled rows across them is gathered (gatherSeries);
//  3. each series' live counts, for an init row less what the sites naming its class hold
//     (series.counts), must rise as above (rising), and make a Leak (series.leakOf);
//  4. the leaks are ranked.
func Leaks(snaps []*Snapshot, opt LeakOptions) ([]Leak, []string, error) {
	if len(snaps) < 2 {
		return nil, nil, fmt.Errorf("leak detection needs two or more snapshots of one program, got %d", len(snaps))
	}
	warnings, err := sameRun(snaps, opt)
	if err != nil {
		return nil, nil, err
	}
	ordered, w := comparable(snaps)
	if w != "" {
		warnings = append(warnings, w)
	}
	if len(ordered) < 2 {
		return nil, warnings, fmt.Errorf("leak detection needs two or more comparable snapshots: %s", w)
	}
	sort.SliceStable(ordered, func(i, j int) bool { return uptime(ordered[i]) < uptime(ordered[j]) })
	if w := untrackedWarning(ordered); w != "" {
		warnings = append(warnings, w)
	}
	ss := gatherSeries(ordered)
	n := len(ordered)
	times := make([]float64, n)
	haveTimes := true
	for i, s := range ordered {
		u := uptime(s)
		if u < 0 {
			haveTimes = false
		}
		times[i] = float64(u) / 1000
	}
	var out []Leak
	for k, rows := range ss.rows {
		live, bytes := ss.counts(k, rows)
		grew, ok := rising(live, opt)
		if !ok {
			continue
		}
		l := ss.leakOf(ordered[n-1], k, live, bytes, grew)
		if haveTimes {
			l.Slope = slope(times, live)
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		ga, gb := growthBytes(a), growthBytes(b)
		if ga != gb {
			return ga > gb
		}
		if a.PerSnapshot != b.PerSnapshot {
			return a.PerSnapshot > b.PerSnapshot
		}
		return a.Site < b.Site
	})
	return out, warnings, nil
}

// sameRun checks that every snapshot has liveness data and comes from the run of the first:
// snapshots of other runs are refused, or with MixedRuns warned of.
func sameRun(snaps []*Snapshot, opt LeakOptions) ([]string, error) {
	var warnings []string
	for _, s := range snaps {
		if !s.Liveness {
			return nil, &NoLivenessError{Path: s.Path}
		}
		if s.Header["pid"] == snaps[0].Header["pid"] && s.Header["program"] == snaps[0].Header["program"] {
			continue
		}
		which := fmt.Sprintf("%s is of %s, %s of %s", s.Path, runName(s), snaps[0].Path, runName(snaps[0]))
		if !opt.MixedRuns {
			return nil, fmt.Errorf("%w: %s", ErrDifferentRuns, which)
		}
		warnings = append(warnings, which+": comparing different runs")
	}
	return warnings, nil
}

// seriesKey is a row across snapshots.
type seriesKey struct{ account, site, part int }

// acctClass is what the sites naming a class hold live of an account's objects.
type acctClass struct {
	account int
	class   string
}

// series are the rows of snapshots in time order.
type series struct {
	rows map[seriesKey][]Row // each row's settled rows, a zero Row where a snapshot lacks it
	// For init rows: their class, and per snapshot what the sites naming the class hold live.
	initClass map[seriesKey]string
	named     []map[acctClass]Row
}

// gatherSeries gathers the settled rows of the snapshots (in time order) by row.
func gatherSeries(ordered []*Snapshot) *series {
	n := len(ordered)
	ss := &series{rows: map[seriesKey][]Row{}, initClass: map[seriesKey]string{}, named: make([]map[acctClass]Row, n)}
	for i, s := range ordered {
		hooks := s.hookIndex()
		ss.named[i] = map[acctClass]Row{}
		for _, r := range s.Rows {
			r = settled(s, r)
			k := seriesKey{r.Account, r.Site, r.Part}
			if ss.rows[k] == nil {
				ss.rows[k] = make([]Row, n)
			}
			ss.rows[k][i] = r
			switch role, class := hooks.role(s, r); role {
			case hookInit:
				ss.initClass[k] = class
			case hookNamed:
				ac := acctClass{r.Account, class}
				sum := ss.named[i][ac]
				sum.Live += r.Live
				if sum.LiveBytes >= 0 && r.LiveBytes >= 0 {
					sum.LiveBytes += r.LiveBytes
				} else {
					sum.LiveBytes = -1
				}
				ss.named[i][ac] = sum
			}
		}
	}
	return ss
}

// counts are the live objects and bytes of row k in each snapshot: for an init row, those no
// site naming its class counted, clamped at 0 (bytes -1: unknown).
func (ss *series) counts(k seriesKey, rows []Row) (live, bytes []int64) {
	live, bytes = make([]int64, len(rows)), make([]int64, len(rows))
	class, hook := ss.initClass[k]
	for i, r := range rows {
		live[i], bytes[i] = r.Live, r.LiveBytes
		if hook {
			at := ss.named[i][acctClass{k.account, class}]
			live[i] = max(0, r.Live-at.Live)
			if r.LiveBytes >= 0 && at.LiveBytes >= 0 {
				bytes[i] = max(0, r.LiveBytes-at.LiveBytes)
			} else {
				bytes[i] = -1
			}
		}
	}
	return live, bytes
}

// rising reports whether live counts that rise as Leaks asks, and in how many intervals they grew.
func rising(live []int64, opt LeakOptions) (grew int, ok bool) {
	n := len(live)
	recent, fall := false, int64(0)
	for i := 1; i < n; i++ {
		if live[i] > live[i-1] {
			grew++
			if i > n-1-(n-1+2)/3 { // the last third of the intervals (at least one)
				recent = true
			}
		}
		fall = max(fall, live[i-1]-live[i])
	}
	share := float64(grew) / float64(n-1)
	// The rise must also outgrow the largest fall: a count that drops by as much as it
	// gains is noise around a level (objects in flight when each snapshot's collection
	// ran, on a busy machine), not memory that accumulates.
	rise := live[n-1] - live[0]
	return grew, rise >= opt.MinGrowth && rise > fall && share >= opt.MinShare && recent
}

// leakOf is the Leak of row k, named as the last snapshot names it.
func (ss *series) leakOf(last *Snapshot, k seriesKey, live, bytes []int64, grew int) Leak {
	n := len(live)
	l := Leak{
		Account: last.AccountName(k.account), Live: live, LiveBytes: bytes,
		Grew: grew, Intervals: n - 1, Generations: ss.rows[k][n-1].Generations,
		PerSnapshot: slope(nil, live),
	}
	l.Type = last.TypeOf(Row{Account: k.account, Site: k.site, Part: k.part})
	l.Site = "site#" + strconv.Itoa(k.site)
	if class, hook := ss.initClass[k]; hook {
		l.Hook, l.Type, l.Site = true, class, HookLeakSite
	} else if site, ok := last.Sites[k.site]; ok && site.Method != "" {
		l.Site = site.Method
		if site.Line >= 0 {
			l.Site += " line " + strconv.Itoa(site.Line)
		}
	}
	return l
}

func growthBytes(l Leak) int64 {
	n := len(l.LiveBytes)
	if l.LiveBytes[0] < 0 || l.LiveBytes[n-1] < 0 {
		return l.Live[n-1] - l.Live[0]
	}
	return l.LiveBytes[n-1] - l.LiveBytes[0]
}

// untrackedWarning says when some of the snapshots' live figures are lower bounds: objects made
// while the tracking table was full are counted but not tracked, and a leak among them rises
// less than it does, or not at all.
func untrackedWarning(snaps []*Snapshot) string {
	var n int64
	for _, s := range snaps {
		for _, r := range s.Rows {
			n += r.Untracked
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d objects were made while the tracking table was full and are in no live figure, which are then lower bounds: raise heapledger.liveness.max (docs/runtime.md, Bound)", n)
}

// settled is r with its live figures those leak detection compares (Snapshot.SettledLive),
// the bytes in proportion.
func settled(s *Snapshot, r Row) Row {
	n := s.SettledLive(r)
	if n == r.Live {
		return r
	}
	if r.LiveBytes > 0 && r.Live > 0 {
		r.LiveBytes = int64(float64(r.LiveBytes) * float64(n) / float64(r.Live))
	}
	r.Live = n
	return r
}

// comparable keeps the snapshots whose live figures mean the same thing. One taken after a full
// GC counts what that collection left reachable; one without counts what the last collection
// left, and old garbage no collection has examined since: a series mixing the two would rise
// and fall with the GCs, not with leaks. So when both kinds are given, the GC'd ones are
// compared, if there are two or more, and the others otherwise; the warning says which were
// left out.
func comparable(snaps []*Snapshot) ([]*Snapshot, string) {
	var gcd, not []*Snapshot
	for _, s := range snaps {
		if s.Header["gc_before"] == "true" {
			gcd = append(gcd, s)
		} else {
			not = append(not, s)
		}
	}
	switch {
	case len(gcd) == 0 || len(not) == 0:
		return append([]*Snapshot(nil), snaps...), ""
	case len(gcd) >= 2:
		return gcd, fmt.Sprintf("compared the %d snapshots taken after a full GC only; %d without one (%s) left out: their live figures hold garbage no full collection has cleared", len(gcd), len(not), paths(not))
	default:
		return not, fmt.Sprintf("compared the %d snapshots taken without a full GC only; the one with one (%s) left out: a series mixing the two rises and falls with the GCs (rewrite with --snapshot-gc for exact live figures in every snapshot)", len(not), paths(gcd))
	}
}

// paths lists the files of snaps, the first three and how many more.
func paths(snaps []*Snapshot) string {
	var b []byte
	for i, s := range snaps {
		if i == 3 {
			b = fmt.Appendf(b, ", and %d more", len(snaps)-3)
			break
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, s.Path...)
	}
	return string(b)
}

// runName names the program and process a snapshot comes from.
func runName(s *Snapshot) string {
	name := func(key string) string {
		if v := s.Header[key]; v != "" {
			return v
		}
		return "?"
	}
	return fmt.Sprintf("program %s, process %s", name("program"), name("pid"))
}

func uptime(s *Snapshot) int64 {
	v, err := strconv.ParseInt(s.Header["uptime_ms"], 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// slope is the least-squares slope of ys over xs (over 0, 1, 2, ... when xs is nil).
func slope(xs []float64, ys []int64) float64 {
	n := float64(len(ys))
	var sx, sy, sxx, sxy float64
	for i, y := range ys {
		x := float64(i)
		if xs != nil {
			x = xs[i]
		}
		sx += x
		sy += float64(y)
		sxx += x * x
		sxy += x * float64(y)
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}
