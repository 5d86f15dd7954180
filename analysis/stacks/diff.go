package stacks

import "fmt"

// Diff returns the difference profile of p over base as pprof's -diff_base builds one: p's
// samples, then base's with their values negated and marked Base. Each writer shows it as
// its format expects one (pprof: base samples labelled pprof::base, so that percentages are
// of the base; collapsed stacks: a base and a new column, as difffolded.pl writes them), and
// totals are the net change.
//
// Only the sample types both profiles have are kept (a snapshot without liveness has no
// inuse_*); dropped names those left out, for a warning.
func Diff(p, base *Profile) (d *Profile, dropped []string, err error) {
	if p.HasBase() || base.HasBase() {
		return nil, nil, fmt.Errorf("a difference profile cannot be diffed again")
	}
	var keep, keepBase []int
	d = &Profile{Time: p.Time, Duration: p.Duration}
	for i, t := range p.Types {
		if j := base.Index(t.Type); j >= 0 && base.Types[j].Unit == t.Unit {
			keep, keepBase = append(keep, i), append(keepBase, j)
			d.Types = append(d.Types, t)
		} else {
			dropped = append(dropped, t.Type)
		}
	}
	for _, t := range base.Types {
		if d.Index(t.Type) < 0 {
			dropped = append(dropped, t.Type)
		}
	}
	if len(d.Types) == 0 {
		return nil, dropped, fmt.Errorf("the profile and its base have no sample type in common")
	}
	d.Default = p.Default
	if d.Index(d.Default) < 0 {
		d.Default = d.Types[0].Type
		if d.Index(AllocSpace) >= 0 {
			d.Default = AllocSpace
		}
	}
	pick := func(s Sample, idx []int, sign int64, isBase bool) Sample {
		v := make([]int64, len(idx))
		for k, i := range idx {
			v[k] = sign * s.Values[i]
		}
		s.Values = v
		s.Base = isBase
		return s
	}
	for _, s := range p.Samples {
		d.Samples = append(d.Samples, pick(s, keep, 1, false))
	}
	for _, s := range base.Samples {
		d.Samples = append(d.Samples, pick(s, keepBase, -1, true))
	}
	d.Comments = append([]string{"difference profile: the figures below minus those of the base"}, p.Comments...)
	for _, c := range base.Comments {
		d.Comments = append(d.Comments, "base: "+c)
	}
	return d, dropped, nil
}
