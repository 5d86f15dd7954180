package stacks

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestPprofRoundTrip: what pprof reads back is the profile: its types, totals, labels, and
// Java methods with their files and lines.
func TestPprofRoundTrip(t *testing.T) {
	s := readSnapshot(t, mixed)
	p := FromSnapshot(s)
	var b bytes.Buffer
	if err := p.WritePprof(&b); err != nil {
		t.Fatal(err)
	}
	if b.Len() < 2 || b.Bytes()[0] != 0x1f || b.Bytes()[1] != 0x8b {
		t.Fatal("pprof output is not gzip-compressed")
	}
	pp, err := profile.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range pp.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got := strings.Join(types, " "); got != "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes" || pp.DefaultSampleType != InuseSpace {
		t.Errorf("sample types %s, default %s", got, pp.DefaultSampleType)
	}
	want := reportTotals(s)
	for i, st := range pp.SampleType {
		var sum int64
		for _, smp := range pp.Sample {
			sum += smp.Value[i]
		}
		if sum != want[st.Type] {
			t.Errorf("pprof %s total %d, the report's %d", st.Type, sum, want[st.Type])
		}
	}
	var found bool
	for _, smp := range pp.Sample {
		if smp.Label[LabelType][0] != "java.lang.String" {
			continue
		}
		found = true
		if smp.Label[LabelAccount][0] != "com.acme.*" || smp.Label[LabelKind][0] != "object" || len(smp.Location) != 2 {
			t.Errorf("String sample labels %v, %d locations", smp.Label, len(smp.Location))
		}
		leaf, site := smp.Location[0].Line[0], smp.Location[1].Line[0]
		if leaf.Function.Name != "java.lang.String" || leaf.Function.Filename != "" {
			t.Errorf("leaf %+v", leaf.Function)
		}
		if site.Function.Name != "com.acme.A.run(String[], int)" || site.Function.SystemName != "com.acme.A.run([Ljava/lang/String;I)V" ||
			site.Function.Filename != "com/acme/A.java" || site.Line != 10 {
			t.Errorf("site %+v line %d", site.Function, site.Line)
		}
	}
	if !found {
		t.Error("no sample of the String site")
	}
	for _, smp := range pp.Sample {
		if smp.HasLabel(LabelType, "com.acme.Weird") != smp.HasLabel(LabelSize, "unknown") {
			t.Errorf("size label on %v", smp.Label)
		}
	}
	if pp.TimeNanos == 0 || pp.DurationNanos != 1500e6 || !strings.Contains(strings.Join(pp.Comments, "\n"), "liveness all") {
		t.Errorf("time %d duration %d comments %v", pp.TimeNanos, pp.DurationNanos, pp.Comments)
	}
	// Functions and locations are shared: org.lib.B$Buf.grow's one site appears in two accounts.
	names := map[string]int{}
	for _, f := range pp.Function {
		names[f.Name]++
	}
	if names["org.lib.B$Buf.grow(int)"] != 1 || names["byte[]"] != 1 {
		t.Errorf("functions %v", names)
	}
}

// TestPprofDiffBase: the base samples of a difference profile carry pprof::base, as pprof's own
// -diff_base marks them.
func TestPprofDiffBase(t *testing.T) {
	p := FromSnapshot(readSnapshot(t, mixed))
	d, _, err := Diff(p, p)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := d.Pprof()
	if err != nil {
		t.Fatal(err)
	}
	var base, net int
	var total int64
	for _, smp := range pp.Sample {
		if smp.DiffBaseSample() {
			base++
		}
		total += smp.Value[1]
		net++
	}
	if base != len(p.Samples) || net != 2*len(p.Samples) || total != 0 {
		t.Errorf("%d base samples of %d, net alloc_space %d", base, net, total)
	}
}
