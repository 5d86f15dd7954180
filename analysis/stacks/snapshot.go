package stacks

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

// UnknownMethod names the method of a site the snapshot's table did not name, as reports do.
const UnknownMethod = "(unknown method)"

// FromSnapshot makes the profile of a snapshot: one sample per alloc row, its stack the
// allocated type on the allocating method at the site's line, labelled with the account the
// row was charged to. When the snapshot has calling contexts (--context cct) a sample is one
// row of one context instead, and its stack goes on with the context's callers up to the
// thread's first rewritten method (fullStack). Its figures are those of the text report
// (Snapshot.Summarize):
//
//   - alloc_objects counts objects and arrays alike; alloc_space their shallow bytes;
//   - with liveness, inuse_objects and inuse_space are the live objects and bytes; contexts
//     carry no liveness, so with contexts these come in samples of their own, per site;
//   - a row whose object size was unknown (bytes -1) counts its objects and adds no bytes,
//     marked UnknownSize, as the report leaves its bytes out;
//   - rows of the Object.<init> hook (kind init), a second view of objects that sites may have
//     counted, are left out, as they are of the report's totals.
func FromSnapshot(s *snapshot.Snapshot) *Profile {
	p := &Profile{
		Types:   []ValueType{{AllocObjects, "count"}, {AllocSpace, "bytes"}},
		Default: AllocSpace,
	}
	if s.Liveness {
		p.Types = append(p.Types, ValueType{InuseObjects, "count"}, ValueType{InuseSpace, "bytes"})
		p.Default = InuseSpace
	}
	b := &builder{s: s, p: p}
	if s.Contexts == nil {
		for _, r := range sortedRows(s.Rows) {
			b.add(r, nil, true, s.Liveness)
		}
	} else {
		for i := range s.Contexts {
			for _, r := range sortedRows(s.Contexts[i].Rows) {
				b.add(r, &s.Contexts[i], true, false)
			}
		}
		if s.Liveness {
			for _, r := range sortedRows(s.Rows) {
				b.add(r, nil, false, true)
			}
		}
	}
	p.Comments = snapshotComments(s, b.unknown, b.hook, b.untracked)
	if t, err := time.Parse(time.RFC3339Nano, s.Header["time"]); err == nil {
		p.Time = t
	}
	if ms, err := strconv.ParseInt(s.Header["uptime_ms"], 10, 64); err == nil && ms > 0 {
		p.Duration = time.Duration(ms) * time.Millisecond
	}
	return p
}

func sortedRows(rows []snapshot.Row) []snapshot.Row {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b snapshot.Row) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account), cmp.Compare(a.Site, b.Site), cmp.Compare(a.Part, b.Part))
	})
	return rows
}

// builder turns rows into samples, counting what the comments say was left out.
type builder struct {
	s         *snapshot.Snapshot
	p         *Profile
	unknown   int
	hook      int
	untracked int64
}

// add makes the sample of row r (of context c, nil for a flat row) with its alloc and, with
// liveness, its inuse values, those not asked for being 0.
func (b *builder) add(r snapshot.Row, c *snapshot.Context, alloc, inuse bool) {
	s := b.s
	site, named := s.Sites[r.Site]
	if named && site.Kind == snapshot.KindInit {
		if alloc {
			b.hook++
		}
		return
	}
	typ := s.TypeOf(r)
	smp := Sample{Stack: fullStack(s, site, named, typ, c), Values: []int64{0, 0}, Account: s.AccountName(r.Account), Type: typ, Kind: site.Kind}
	if alloc {
		smp.Values = []int64{r.Count, max(r.Bytes, 0)}
		smp.UnknownSize = r.Bytes < 0
		if smp.UnknownSize {
			b.unknown++
		}
	}
	if s.Liveness {
		if inuse {
			smp.Values = append(smp.Values, r.Live, max(r.LiveBytes, 0))
			b.untracked += r.Untracked
		} else {
			smp.Values = append(smp.Values, 0, 0)
		}
	}
	b.p.Samples = append(b.p.Samples, smp)
}

// fullStack is a sample's stack, leaf first: the allocated type, the allocating method at the
// site's line, then the callers of context c (nil: none). The context's own method is the
// allocating one, except where the runtime's bounds put the allocation in an ancestor (depth
// limit, folded recursion) or an overflow node: the context's methods then all follow.
func fullStack(s *snapshot.Snapshot, site snapshot.Site, named bool, typ string, c *snapshot.Context) []Frame {
	method, line := UnknownMethod, -1
	if named && site.Method != "" {
		method, line = site.Method, site.Line
	}
	stack := []Frame{{Kind: TypeFrame, Name: typ}, MethodFrameOf(method, line)}
	if c == nil {
		return stack
	}
	n := c.ID
	if s.MethodName(c.Method) == method {
		n = c.Parent
	}
	for ; n > 0; n = s.Contexts[n].Parent {
		stack = append(stack, MethodFrameOf(s.MethodName(s.Contexts[n].Method), -1))
	}
	return stack
}

// snapshotComments say where a profile's figures come from and what they leave out.
func snapshotComments(s *snapshot.Snapshot, unknown, hook int, untracked int64) []string {
	h := s.Header
	c := []string{fmt.Sprintf("heapledger snapshot %s: program %s, pid %s, %s snapshot at %s", s.Path, h["program"], h["pid"], h["reason"], h["time"])}
	if s.Liveness {
		live := "liveness " + h["liveness"] + ": inuse_* are the live objects"
		if n, ok := strings.CutPrefix(h["liveness"], "sample:"); ok {
			live += ", estimates scaled from every " + n + "-th allocation per site"
		}
		c = append(c, live)
	}
	if untracked > 0 {
		c = append(c, fmt.Sprintf("%d objects allocated past the tracking bound are in alloc_objects and in neither inuse figure", untracked))
	}
	if unknown > 0 {
		c = append(c, fmt.Sprintf("%d rows had no known object size: their objects are counted, their bytes are not (label size=unknown)", unknown))
	}
	if s.Contexts != nil {
		ctx := "calling contexts (" + h["context"] + "): every stack goes on with the callers of its allocating method"
		if s.Liveness {
			ctx += "; inuse_* are per site, in samples of their own, since contexts carry no liveness"
		}
		c = append(c, ctx)
	}
	if hook > 0 {
		c = append(c, fmt.Sprintf("%d rows of the Object.<init> hook (--object-init) are left out, as from the report's totals", hook))
	}
	return c
}
