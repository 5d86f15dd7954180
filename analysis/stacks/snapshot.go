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
// row was charged to. Its figures are those of the text report (Snapshot.Summarize):
//
//   - alloc_objects counts objects and arrays alike; alloc_space their shallow bytes;
//   - with liveness, inuse_objects and inuse_space are the live objects and bytes;
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
	rows := slices.Clone(s.Rows)
	slices.SortFunc(rows, func(a, b snapshot.Row) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account), cmp.Compare(a.Site, b.Site), cmp.Compare(a.Part, b.Part))
	})
	var unknown, hook int
	var untracked int64
	for _, r := range rows {
		site, named := s.Sites[r.Site]
		if named && site.Kind == snapshot.KindInit {
			hook++
			continue
		}
		method, line := UnknownMethod, -1
		if named && site.Method != "" {
			method, line = site.Method, site.Line
		}
		typ := s.TypeOf(r)
		smp := Sample{
			Stack:   []Frame{{Kind: TypeFrame, Name: typ}, MethodFrameOf(method, line)},
			Values:  []int64{r.Count, max(r.Bytes, 0)},
			Account: s.AccountName(r.Account), Type: typ, Kind: site.Kind,
			UnknownSize: r.Bytes < 0,
		}
		if s.Liveness {
			smp.Values = append(smp.Values, r.Live, max(r.LiveBytes, 0))
			untracked += r.Untracked
		}
		if smp.UnknownSize {
			unknown++
		}
		p.Samples = append(p.Samples, smp)
	}
	p.Comments = snapshotComments(s, unknown, hook, untracked)
	if t, err := time.Parse(time.RFC3339Nano, s.Header["time"]); err == nil {
		p.Time = t
	}
	if ms, err := strconv.ParseInt(s.Header["uptime_ms"], 10, 64); err == nil && ms > 0 {
		p.Duration = time.Duration(ms) * time.Millisecond
	}
	return p
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
	if hook > 0 {
		c = append(c, fmt.Sprintf("%d rows of the Object.<init> hook (--object-init) are left out, as from the report's totals", hook))
	}
	return c
}
