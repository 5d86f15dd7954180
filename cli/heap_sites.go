package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/heapdump"
	"github.com/heapledger/heapledger/analysis/leaks"
	"github.com/heapledger/heapledger/analysis/tracked"
)

// ledgerInDump is what `heap analyze` found of heapledger's runtime in a dump: the tracking
// references, labelled for the analysis, and the runtime's own objects, set apart from it.
type ledgerInDump struct {
	rt     *tracked.Runtime
	refs   int // tracking references
	groups *tracked.Groups
	names  *tracked.Names
}

// findLedger reads heapledger's runtime in d (nil when the dump holds none), sets its objects
// apart and labels the tracked objects for in. given holds the names --table and --snapshot gave;
// the table the runtime held in the dump, if any, comes first. Warnings go to warn; phase begins
// the phase of the analysis this is, when there is a runtime to work on.
func findLedger(d *heapdump.Dump, given *tracked.Names, in *leaks.Input, warn, phase func(string)) (*ledgerInDump, error) {
	rt, err := tracked.Find(d, d.Watched[0])
	if err != nil {
		return nil, err
	}
	if !rt.Present {
		if len(given.From) > 0 {
			warn(fmt.Sprintf("%s holds no heapledger runtime: the names of %s name nothing here", d.Path, strings.Join(given.From, " and ")))
		}
		return nil, nil
	}
	phase("setting heapledger's objects apart")
	names := tracked.NewNames()
	if rt.Table != nil {
		inDump, err := tracked.TableNames(bytes.NewReader(rt.Table), "the table the runtime held in the dump")
		if err != nil {
			warn(err.Error())
		} else {
			names = inDump
		}
	}
	if differ := names.Add(given); differ > 0 && len(names.From) > 1 {
		warn(fmt.Sprintf("%s name %d IDs otherwise than the table the runtime held in the dump, whose names are used: a table or snapshot of another build?", strings.Join(given.From, " and "), differ))
	}
	rt.SetApart(d)
	in.Apart, in.ApartEdges = rt.Own, rt.OwnEdges
	l := &ledgerInDump{rt: rt, names: names, refs: len(rt.Refs.Nodes)}
	if l.refs > rt.Cleared {
		in.Labels, l.groups = rt.Labels(d.Graph.N())
	}
	// The references are in the labels now: their columns go before the analysis starts.
	rt.Refs, d.Watched = tracked.Refs{}, nil
	return l, nil
}

// givenNames reads the names --table and --snapshot give.
func givenNames(table, snap string) (*tracked.Names, error) {
	names := tracked.NewNames()
	if table != "" {
		n, err := tracked.TableFile(table)
		if err != nil {
			return nil, fmt.Errorf("--table: %w", err)
		}
		names.Add(n)
	}
	if snap != "" {
		n, err := tracked.SnapshotNames(snap)
		if err != nil {
			return nil, fmt.Errorf("--snapshot: %w", err)
		}
		names.Add(n)
	}
	return names, nil
}

// ledgerView is the report's part about heapledger's runtime, as printed and as JSON.
type ledgerView struct {
	Liveness string `json:"liveness"`
	Rate     uint64 `json:"sampling_rate"`
	// Estimates says the retained sizes are scaled from a sample (liveness sample:N).
	Estimates bool `json:"estimates"`

	TrackingReferences int    `json:"tracking_references"`
	TrackingBytes      uint64 `json:"tracking_bytes"`
	ClearedReferences  int    `json:"cleared_references"`
	// RuntimeObjects and RuntimeBytes total everything set apart: the tracking references and
	// every other object only heapledger's classes hold.
	RuntimeObjects uint64   `json:"runtime_objects"`
	RuntimeBytes   uint64   `json:"runtime_bytes"`
	NamesFrom      []string `json:"names_from"`

	Accounts []groupView `json:"retained_by_account"`
	Sites    []groupView `json:"retained_by_site"`
}

// groupView is the tracked objects of one account, site, or account and site.
type groupView struct {
	Account   string `json:"account,omitempty"`
	AccountID *int   `json:"account_id,omitempty"`
	Site      string `json:"site,omitempty"`
	SiteID    *int   `json:"site_id,omitempty"`
	// Objects and Shallow are the live objects and their shallow bytes (sampled: estimates,
	// Tracked times the rate); Tracked counts the tracking references found.
	Objects uint64 `json:"objects"`
	Shallow uint64 `json:"shallow"`
	Tracked uint64 `json:"tracked"`
	// Retained is the size of the union of the objects' retained sets (sampled: an estimate,
	// give or take Error, two standard errors, and no less than AtLeast, what the tracked
	// objects alone retain).
	Retained uint64 `json:"retained"`
	Error    uint64 `json:"error,omitempty"`
	AtLeast  uint64 `json:"at_least,omitempty"`
}

// allocatedView is who made what a suspect's accumulation point holds.
type allocatedView struct {
	Accounts []groupView `json:"accounts"`
	Sites    []groupView `json:"sites"`
}

func (l *ledgerInDump) view(rep *leaks.Report) *ledgerView {
	rt := l.rt
	v := &ledgerView{Liveness: rt.Liveness, Rate: rt.Rate, Estimates: rt.Rate > 1,
		TrackingReferences: l.refs, TrackingBytes: rt.RefBytes, ClearedReferences: rt.Cleared,
		RuntimeObjects: rt.OwnObjects, RuntimeBytes: rt.OwnBytes, NamesFrom: l.names.From}
	if v.NamesFrom == nil {
		v.NamesFrom = []string{}
	}
	if l.groups != nil && rep.ByLabel != nil {
		v.Accounts = l.rows(rep.ByLabel[tracked.DimAccount], tracked.DimAccount)
		v.Sites = l.rows(rep.ByLabel[tracked.DimSite], tracked.DimSite)
	}
	return v
}

// allocated is who made what suspect s holds, or nil without tracking references.
func (l *ledgerInDump) allocated(s leaks.Suspect) *allocatedView {
	if l == nil || l.groups == nil || s.Held == nil {
		return nil
	}
	return &allocatedView{Accounts: l.rows(s.Held[tracked.DimAccount], tracked.DimAccount), Sites: l.rows(s.Held[tracked.DimPair], tracked.DimPair)}
}

// rows names the groups of dimension dim.
func (l *ledgerInDump) rows(groups []dominators.GroupRetained, dim int) []groupView {
	rate := max(l.rt.Rate, 1)
	out := make([]groupView, 0, len(groups))
	for _, o := range groups {
		row := groupView{Objects: o.Members * rate, Shallow: o.Shallow * rate, Tracked: o.Members, Retained: o.Retained}
		if rate > 1 {
			row.Error = uint64(math.Round(2 * math.Sqrt(o.Variance)))
			row.AtLeast = o.AtLeast
			row.Retained = max(o.Retained, o.AtLeast)
		}
		account, site := -1, -1
		switch dim {
		case tracked.DimAccount:
			account = l.groups.Accounts[o.Group]
		case tracked.DimSite:
			site = l.groups.Sites[o.Group]
		case tracked.DimPair:
			account, site = l.groups.Pairs[o.Group][0], l.groups.Pairs[o.Group][1]
		}
		if account >= 0 {
			row.Account, row.AccountID = l.names.Account(account), &account
		}
		if site >= 0 {
			row.Site, row.SiteID = l.names.Site(site), &site
		}
		out = append(out, row)
	}
	return out
}

// heldShown is how many accounts, and how many sites, the text report lists below each suspect.
const heldShown = 5

// writeSummary says, below the heap's totals, what the figures leave out as heapledger's own, and
// where the names of accounts and sites come from.
func (v *ledgerView) writeSummary(w io.Writer) {
	fmt.Fprintf(w, "heapledger (liveness %s): left out of every figure as its own: %d tracking references (%d bytes",
		v.Liveness, v.TrackingReferences, v.TrackingBytes)
	if v.ClearedReferences > 0 {
		fmt.Fprintf(w, "; %d of them cleared by the collector, not yet refunded", v.ClearedReferences)
	}
	fmt.Fprintf(w, ") and %d other objects of its runtime (%d bytes)\n", v.RuntimeObjects-uint64(v.TrackingReferences), v.RuntimeBytes-v.TrackingBytes)
	if v.TrackingReferences == 0 {
		return
	}
	if len(v.NamesFrom) > 0 {
		fmt.Fprintf(w, "names of accounts and sites: %s\n", strings.Join(v.NamesFrom, "; "))
	} else {
		fmt.Fprintln(w, "names of accounts and sites: none (the dump holds no table, as a dump the runtime did not write; --table or --snapshot names them)")
	}
}

// writeTables prints retained size by account and by site (top of them).
func (v *ledgerView) writeTables(w io.Writer, top int) {
	if v.TrackingReferences == 0 {
		return
	}
	basis := "exact: liveness all tracked every allocation"
	if v.Estimates {
		basis = fmt.Sprintf("estimated from every %s allocation of each site: ± is two standard errors (about 95%%), at least is what the tracked objects alone retain", ordinal(v.Rate))
	}
	fmt.Fprintf(w, "\nretained size by memory account (%s)\n", basis)
	writeGroups(w, v.Accounts, len(v.Accounts), v.Estimates, "account", func(g groupView) string { return g.Account })
	fmt.Fprintf(w, "\nretained size by allocation site (top %d of %d)\n", min(top, len(v.Sites)), len(v.Sites))
	writeGroups(w, v.Sites, top, v.Estimates, "site", func(g groupView) string { return g.Site })
}

// writeGroups prints up to n rows under a header whose last column is what, named by name.
func writeGroups(w io.Writer, rows []groupView, n int, estimates bool, what string, name func(groupView) string) {
	if estimates {
		fmt.Fprintf(w, "%14s %12s %14s %12s %14s  %s\n", "retained", "±", "at least", "objects", "shallow", what)
	} else {
		fmt.Fprintf(w, "%14s %12s %14s  %s\n", "retained", "objects", "shallow", what)
	}
	for _, r := range rows[:min(n, len(rows))] {
		if estimates {
			fmt.Fprintf(w, "%14d %12d %14d %12d %14d  %s\n", r.Retained, r.Error, r.AtLeast, r.Objects, r.Shallow, name(r))
		} else {
			fmt.Fprintf(w, "%14d %12d %14d  %s\n", r.Retained, r.Objects, r.Shallow, name(r))
		}
	}
}

// writeText prints, below a suspect, who made what its accumulation point holds.
func (a *allocatedView) writeText(w io.Writer, estimates bool) {
	if a == nil {
		return
	}
	if len(a.Accounts) == 0 {
		fmt.Fprintln(w, "    it holds no object heapledger tracked")
		return
	}
	fmt.Fprintln(w, "    what it holds was allocated by (retained bytes, objects):")
	est := func(g groupView) string {
		if estimates {
			return fmt.Sprintf("%d ± %d bytes, ~%s", g.Retained, g.Error, objects(g.Objects))
		}
		return fmt.Sprintf("%d bytes, %s", g.Retained, objects(g.Objects))
	}
	for _, g := range a.Accounts[:min(heldShown, len(a.Accounts))] {
		fmt.Fprintf(w, "      account %s: %s\n", g.Account, est(g))
	}
	if more := len(a.Accounts) - heldShown; more > 0 {
		fmt.Fprintf(w, "      ... %d more accounts (all of them in --json)\n", more)
	}
	for _, g := range a.Sites[:min(heldShown, len(a.Sites))] {
		fmt.Fprintf(w, "      site %s (account %s): %s\n", g.Site, g.Account, est(g))
	}
	if more := len(a.Sites) - heldShown; more > 0 {
		fmt.Fprintf(w, "      ... %d more sites (all of them in --json)\n", more)
	}
}

// ordinal writes n as "8th", "2nd", "21st", "12th".
func ordinal(n uint64) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprint(n) + suffix
}

// objects is "1 object" or "N objects".
func objects(n uint64) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}
