package snapshot

import "sort"

// Report aggregates a snapshot per account.
type Report struct {
	Liveness bool            `json:"liveness"`
	Ages     []int64         `json:"live_by_age,omitempty"`
	Header   Header          `json:"header"`
	Total    Totals          `json:"total"`
	Accounts []AccountReport `json:"accounts"`
	// Hook sums the accounts' Object.<init> hook views (nil when the hook was off); it is not
	// in Total.
	Hook *HookView `json:"object_init_hook,omitempty"`
	// Contexts is the calling-context tree (--context cct), nil when the snapshot has none.
	Contexts *ContextReport `json:"contexts,omitempty"`
}

// HookView is what the Object.<init> hook (the agent's --object-init) saw: every object whose
// constructor chain ran, counted per class in rows of kind init. Rewritten sites may have
// counted the same objects, so none of it is in the totals beside it.
type HookView struct {
	// Constructed sums the init rows.
	Constructed Totals `json:"constructed"`
	// NotSeen are the constructed objects no rewritten site counted: per class, the init row
	// minus the rows of the sites that name the class (object, concat), clamped at 0; then
	// less Unnamed, clamped at 0 again.
	NotSeen Totals `json:"not_seen"`
	// Unnamed sums the rows of reflect and lambda sites, whose objects run a constructor of a
	// class the site does not name: they are in some class's init row, which one the snapshot
	// cannot say, so they come off the account's NotSeen, not a class's.
	Unnamed Totals `json:"unnamed_sites"`
	// Classes are the account's init classes, most bytes not seen first (at most top).
	Classes []HookClass `json:"classes,omitempty"`
}

// HookClass is one class in the hook's view of an account.
type HookClass struct {
	Name        string `json:"name"`
	Constructed Totals `json:"constructed"`
	AtSites     Totals `json:"at_sites"` // rows of the object (and concat) sites of the class
	NotSeen     Totals `json:"not_seen"` // Constructed minus AtSites, each figure clamped at 0
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
	// Hook is the account's Object.<init> hook view, not in Totals (nil when the hook was off).
	Hook *HookView `json:"object_init_hook,omitempty"`
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
	rep := &Report{Header: s.Header, Liveness: s.Liveness, Ages: s.Ages, Contexts: s.ContextTree()}
	type acc struct {
		AccountReport
		types, methods, sites map[string]*Totals
		hook                  map[string]*HookClass // by init class, nil until a row concerns the hook
		unnamed               Totals
	}
	byID := map[int]*acc{}
	hooks := s.hookIndex()
	for _, r := range s.Rows {
		a := byID[r.Account]
		if a == nil {
			a = &acc{AccountReport: AccountReport{ID: r.Account, Name: s.AccountName(r.Account)},
				types: map[string]*Totals{}, methods: map[string]*Totals{}, sites: map[string]*Totals{}}
			byID[r.Account] = a
		}
		arr := s.isArray(r)
		role, class := hooks.role(s, r)
		if role != notHook && a.hook == nil {
			a.hook = map[string]*HookClass{}
		}
		switch role {
		case hookInit, hookNamed:
			hc := a.hook[class]
			if hc == nil {
				hc = &HookClass{Name: class}
				a.hook[class] = hc
			}
			if role == hookInit {
				hc.Constructed.add(false, r)
				continue // a second view: in no total, type, method or site list
			}
			hc.AtSites.add(false, r)
		case hookUnnamed:
			a.unnamed.add(false, r)
		}
		a.Totals.add(arr, r)
		rep.Total.add(arr, r)
		typ := s.TypeOf(r)
		method, siteName := "(unknown method)", "site#"+itoa(r.Site)
		if site, ok := s.Sites[r.Site]; ok && site.Method != "" {
			method = site.Method
			siteName = site.Where(typ)
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
	var shares []*hookShare
	hookOf := map[int]*hookShare{}
	for id, a := range byID {
		if a.hook != nil {
			hookOf[id] = &hookShare{classes: a.hook, unnamed: a.unnamed}
			shares = append(shares, hookOf[id])
		}
	}
	settle(shares)
	for id, a := range byID {
		a.TopTypes = topEntries(a.types, top)
		a.TopMethods = topEntries(a.methods, top)
		a.TopSites = topEntries(a.sites, top)
		if h := hookOf[id]; h != nil {
			if v := hookView(h, top); v.Constructed != (Totals{}) {
				a.Hook = v
				if rep.Hook == nil {
					rep.Hook = &HookView{}
				}
				rep.Hook.Constructed.plus(v.Constructed)
				rep.Hook.NotSeen.plus(v.NotSeen)
				rep.Hook.Unnamed.plus(v.Unnamed)
			}
		}
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

// hookView is one account's view from the hook, settled (settle): classes with an init row,
// what their named sites counted, and what no site saw.
func hookView(h *hookShare, top int) *HookView {
	v := &HookView{Unnamed: h.unnamed, NotSeen: h.notSeen}
	for _, hc := range h.classes {
		if hc.Constructed == (Totals{}) {
			continue // named sites of a class the hook never counted in this account
		}
		v.Constructed.plus(hc.Constructed)
		v.Classes = append(v.Classes, *hc)
	}
	sort.Slice(v.Classes, func(i, j int) bool {
		x, y := v.Classes[i], v.Classes[j]
		if x.NotSeen.Bytes != y.NotSeen.Bytes {
			return x.NotSeen.Bytes > y.NotSeen.Bytes
		}
		if x.NotSeen.Objects != y.NotSeen.Objects {
			return x.NotSeen.Objects > y.NotSeen.Objects
		}
		if x.Constructed.Objects != y.Constructed.Objects {
			return x.Constructed.Objects > y.Constructed.Objects
		}
		return x.Name < y.Name
	})
	if top > 0 && len(v.Classes) > top {
		v.Classes = v.Classes[:top]
	}
	return v
}
