package pipeline

import (
	"bytes"
	"fmt"
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

// Ledger is the report's part about heapledger's runtime.
type Ledger struct {
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

	Accounts []Group `json:"retained_by_account"`
	Sites    []Group `json:"retained_by_site"`
}

// Group is the tracked objects of one account, site, or account and site.
type Group struct {
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

// Allocated is who made what a suspect's accumulation point holds.
type Allocated struct {
	Accounts []Group `json:"accounts"`
	Sites    []Group `json:"sites"`
}

func (l *ledgerInDump) view(rep *leaks.Report) *Ledger {
	rt := l.rt
	v := &Ledger{Liveness: rt.Liveness, Rate: rt.Rate, Estimates: rt.Rate > 1,
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
func (l *ledgerInDump) allocated(s leaks.Suspect) *Allocated {
	if l == nil || l.groups == nil || s.Held == nil {
		return nil
	}
	return &Allocated{Accounts: l.rows(s.Held[tracked.DimAccount], tracked.DimAccount), Sites: l.rows(s.Held[tracked.DimPair], tracked.DimPair)}
}

// rows names the groups of dimension dim.
func (l *ledgerInDump) rows(groups []dominators.GroupRetained, dim int) []Group {
	rate := max(l.rt.Rate, 1)
	out := make([]Group, 0, len(groups))
	for _, o := range groups {
		row := Group{Objects: o.Members * rate, Shallow: o.Shallow * rate, Tracked: o.Members, Retained: o.Retained}
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
