package snapshot

import "sort"

// Report aggregates a snapshot per account.
type Report struct {
	Liveness bool              `json:"liveness"`
	Ages     []int64           `json:"live_by_age,omitempty"`
	Header   map[string]string `json:"header"`
	Total    Totals            `json:"total"`
	Accounts []AccountReport   `json:"accounts"`
}

// Totals are the sums of a group of rows. Bytes leaves out rows whose size was unknown, and
// UnknownRows says how many there were, so a partial figure never looks complete.
type Totals struct {
	Objects     int64 `json:"objects"`
	Arrays      int64 `json:"arrays"`
	Elements    int64 `json:"elements"`
	Bytes       int64 `json:"bytes"`
	UnknownRows int   `json:"unknown_size_rows,omitempty"`
	// With liveness: objects (and arrays) still alive and their bytes, and those reclaimed.
	Live      int64 `json:"live,omitempty"`
	LiveBytes int64 `json:"live_bytes,omitempty"`
	Reclaimed int64 `json:"reclaimed,omitempty"`
	Untracked int64 `json:"untracked,omitempty"`
}

// AccountReport is one account's share.
type AccountReport struct {
	ID         int     `json:"id"`
	Name       string  `json:"name"`
	Totals     Totals  `json:"totals"`
	TopTypes   []Entry `json:"top_types"`
	TopMethods []Entry `json:"top_methods"`
	TopSites   []Entry `json:"top_sites"`
}

// Entry is a type, method or site with what it allocated.
type Entry struct {
	Name   string `json:"name"`
	Totals Totals `json:"totals"`
}

func (t *Totals) add(isArray bool, r Row) {
	if isArray {
		t.Arrays += r.Count
		t.Elements += r.Elements
	} else {
		t.Objects += r.Count
	}
	if r.Bytes < 0 {
		t.UnknownRows++
	} else {
		t.Bytes += r.Bytes
	}
	t.Live += r.Live
	if r.LiveBytes > 0 {
		t.LiveBytes += r.LiveBytes
	}
	t.Reclaimed += r.Reclaimed
	t.Untracked += r.Untracked
}

func (s *Snapshot) isArray(r Row) bool {
	if site, ok := s.Sites[r.Site]; ok && site.Kind != "" {
		switch site.Kind {
		case "array", "multi", "reflect-array", "clone-array":
			return true
		}
		return false
	}
	return r.Elements > 0
}

// Summarize builds the per-account report, accounts by bytes (largest first), with at most
// top entries in each top list (0 means all).
func (s *Snapshot) Summarize(top int) *Report {
	rep := &Report{Header: s.Header, Liveness: s.Liveness, Ages: s.Ages}
	type acc struct {
		AccountReport
		types, methods, sites map[string]*Totals
	}
	byID := map[int]*acc{}
	for _, r := range s.Rows {
		a := byID[r.Account]
		if a == nil {
			a = &acc{AccountReport: AccountReport{ID: r.Account, Name: s.AccountName(r.Account)},
				types: map[string]*Totals{}, methods: map[string]*Totals{}, sites: map[string]*Totals{}}
			byID[r.Account] = a
		}
		arr := s.isArray(r)
		a.Totals.add(arr, r)
		rep.Total.add(arr, r)
		typ := s.TypeOf(r)
		method, siteName := "(unknown method)", "site#"+itoa(r.Site)
		if site, ok := s.Sites[r.Site]; ok && site.Method != "" {
			method = site.Method
			siteName = site.Method
			if site.Line >= 0 {
				siteName += " line " + itoa(site.Line)
			}
			if site.Offset >= 0 {
				siteName += " @" + itoa(site.Offset)
			}
			siteName += " " + typ
		}
		for m, k := range map[*map[string]*Totals]string{&a.types: typ, &a.methods: method, &a.sites: siteName} {
			t := (*m)[k]
			if t == nil {
				t = &Totals{}
				(*m)[k] = t
			}
			t.add(arr, r)
		}
	}
	for _, a := range byID {
		a.TopTypes = topEntries(a.types, top)
		a.TopMethods = topEntries(a.methods, top)
		a.TopSites = topEntries(a.sites, top)
		rep.Accounts = append(rep.Accounts, a.AccountReport)
	}
	sort.Slice(rep.Accounts, func(i, j int) bool {
		x, y := rep.Accounts[i], rep.Accounts[j]
		if x.Totals.Bytes != y.Totals.Bytes {
			return x.Totals.Bytes > y.Totals.Bytes
		}
		return x.ID < y.ID
	})
	return rep
}

func topEntries(m map[string]*Totals, top int) []Entry {
	out := make([]Entry, 0, len(m))
	for k, t := range m {
		out = append(out, Entry{Name: k, Totals: *t})
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i].Totals, out[j].Totals
		if x.Bytes != y.Bytes {
			return x.Bytes > y.Bytes
		}
		if x.Objects+x.Arrays != y.Objects+y.Arrays {
			return x.Objects+x.Arrays > y.Objects+y.Arrays
		}
		return out[i].Name < out[j].Name
	})
	if top > 0 && len(out) > top {
		out = out[:top]
	}
	return out
}
