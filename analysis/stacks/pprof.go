package stacks

import (
	"io"

	"github.com/google/pprof/profile"
)

// Labels of pprof samples: -tagfocus, -tagroot and -tags read them.
const (
	LabelAccount = "account"
	LabelType    = "type"
	LabelKind    = "kind"
	// LabelSize is "unknown" on the samples of rows whose object size was unknown.
	LabelSize = "size"
	// LabelBase marks the base samples of a difference profile, as pprof's own -diff_base
	// marks them: pprof then takes percentages of the base, as with -diff_base.
	LabelBase = "pprof::base"
)

// Pprof converts p to pprof's model: a function per distinct frame (a Java method with its
// derived source file, or an allocated type), a location per function and line, and the
// sample's account, type and kind as labels.
func (p *Profile) Pprof() (*profile.Profile, error) {
	if err := p.CheckValid(); err != nil {
		return nil, err
	}
	out := &profile.Profile{
		DefaultSampleType: p.Default,
		// Every count is exact: each allocation stands for itself.
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     1,
		Comments:   p.Comments,
		// Without a mapping that says so, pprof would try to symbolize the locations as
		// machine code of some binary.
		Mapping: []*profile.Mapping{{ID: 1, File: "java", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}},
	}
	for _, t := range p.Types {
		out.SampleType = append(out.SampleType, &profile.ValueType{Type: t.Type, Unit: t.Unit})
	}
	if !p.Time.IsZero() {
		out.TimeNanos = p.Time.UnixNano()
	}
	out.DurationNanos = p.Duration.Nanoseconds()
	type funcKey struct{ name, method, file string }
	type locKey struct {
		fn   *profile.Function
		line int
	}
	funcs := map[funcKey]*profile.Function{}
	locs := map[locKey]*profile.Location{}
	location := func(f Frame) *profile.Location {
		fk := funcKey{f.Name, f.Method, f.File}
		fn := funcs[fk]
		if fn == nil {
			system := f.Method
			if system == "" {
				system = f.Name
			}
			fn = &profile.Function{ID: uint64(len(out.Function) + 1), Name: f.Name, SystemName: system, Filename: f.File}
			funcs[fk] = fn
			out.Function = append(out.Function, fn)
		}
		lk := locKey{fn, f.Line}
		loc := locs[lk]
		if loc == nil {
			loc = &profile.Location{ID: uint64(len(out.Location) + 1), Mapping: out.Mapping[0],
				Line: []profile.Line{{Function: fn, Line: int64(f.Line)}}}
			locs[lk] = loc
			out.Location = append(out.Location, loc)
		}
		return loc
	}
	for _, s := range p.Samples {
		ps := &profile.Sample{Value: s.Values, Label: map[string][]string{LabelAccount: {s.Account}, LabelType: {s.Type}}}
		if s.Kind != "" {
			ps.Label[LabelKind] = []string{s.Kind}
		}
		if s.UnknownSize {
			ps.Label[LabelSize] = []string{"unknown"}
		}
		if s.Base {
			ps.Label[LabelBase] = []string{"true"}
		}
		for _, f := range s.Stack {
			ps.Location = append(ps.Location, location(f))
		}
		out.Sample = append(out.Sample, ps)
	}
	return out, out.CheckValid()
}

// WritePprof writes p as a gzip-compressed pprof protocol buffer, the form `go tool pprof`
// reads.
func (p *Profile) WritePprof(w io.Writer) error {
	pp, err := p.Pprof()
	if err != nil {
		return err
	}
	return pp.Write(w)
}
