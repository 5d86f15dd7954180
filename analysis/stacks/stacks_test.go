package stacks

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/fixtures"
)

// mixed is fixtures/snapshots/profiles.snapshot, a snapshot with every kind of row a profile
// must treat as the report does: a library site charged to two accounts, the two parts of a
// multianewarray site, a row of unknown size, a row of the Object.<init> hook, a site the
// table did not name, and objects past the tracking bound.
var mixed = func() string {
	b, err := os.ReadFile(filepath.Join(fixtures.Dir(), "snapshots", "profiles.snapshot"))
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func readSnapshot(t *testing.T, text string) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.Read(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	s.Path = "mixed.snapshot"
	return s
}

// reportTotals are the text report's figures in the profile's sample types.
func reportTotals(s *snapshot.Snapshot) map[string]int64 {
	t := s.Summarize(0).Total
	m := map[string]int64{AllocObjects: t.Objects + t.Arrays, AllocSpace: t.Bytes}
	if s.Liveness {
		m[InuseObjects], m[InuseSpace] = t.Live, t.LiveBytes
	}
	return m
}

func checkTotals(t *testing.T, what string, p *Profile, want map[string]int64) {
	t.Helper()
	if len(p.Types) != len(want) {
		t.Errorf("%s: sample types %v, want %d", what, p.Types, len(want))
	}
	for typ, w := range want {
		i := p.Index(typ)
		if i < 0 {
			t.Errorf("%s: no sample type %s", what, typ)
			continue
		}
		if got := p.Total(i); got != w {
			t.Errorf("%s: %s total %d, the report's %d", what, typ, got, w)
		}
	}
}

// TestFromSnapshotMatchesReport: the profile's totals are the text report's, whatever the row.
func TestFromSnapshotMatchesReport(t *testing.T) {
	s := readSnapshot(t, mixed)
	p := FromSnapshot(s)
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	want := reportTotals(s)
	// By hand: 100+4+3+5+50+7+1 objects and arrays (the init row's 200 left out); bytes without
	// the unknown row's.
	if want[AllocObjects] != 170 || want[AllocSpace] != 2400+16448+168+320+4000+16 || want[InuseObjects] != 63 || want[InuseSpace] != 240+8224+56+320+3200+16 {
		t.Fatalf("the report's totals are not what the fixture says: %v", want)
	}
	checkTotals(t, "mixed", p, want)
	if p.Default != InuseSpace {
		t.Errorf("default %s, want inuse_space with liveness", p.Default)
	}
	if len(p.Samples) != 7 {
		t.Fatalf("%d samples, want 7 (the init row left out)", len(p.Samples))
	}
	var unknown, multi []Sample
	for _, smp := range p.Samples {
		if smp.UnknownSize {
			unknown = append(unknown, smp)
		}
		if smp.Kind == "multi" {
			multi = append(multi, smp)
		}
	}
	if len(unknown) != 1 || unknown[0].Type != "com.acme.Weird" || unknown[0].Values[1] != 0 || unknown[0].Values[0] != 7 {
		t.Errorf("unknown-size samples: %+v", unknown)
	}
	if len(multi) != 2 || multi[0].Type != "int[][] (reference levels)" || multi[1].Type != "int[]" {
		t.Errorf("multi samples: %+v", multi)
	}
	last := p.Samples[0] // sorted by account: <unaccounted> first
	if last.Account != "<unaccounted>" || last.Stack[1].Name != UnknownMethod || last.Type != "site#99" {
		t.Errorf("sample of an unnamed site: %+v", last)
	}
	joined := strings.Join(p.Comments, "\n")
	for _, w := range []string{"program acme.Main, pid 42", "liveness all", "3 objects allocated past the tracking bound", "1 rows had no known object size", "1 rows of the Object.<init> hook"} {
		if !strings.Contains(joined, w) {
			t.Errorf("comments lack %q:\n%s", w, joined)
		}
	}
	if p.Time.Year() != 2026 || p.Duration.Milliseconds() != 1500 {
		t.Errorf("time %v, duration %v", p.Time, p.Duration)
	}
}

// TestFromSnapshotWithoutLiveness: no inuse types, alloc_space the default.
func TestFromSnapshotWithoutLiveness(t *testing.T) {
	s := readSnapshot(t, "# heapledger snapshot 1\nreason\texit\naccount\t1\tcom.acme\n"+
		"site\t1\tobject\tjava.lang.String\tcom.acme.A.run()V\t3\t10\nalloc\t1\t1\t0\t100\t0\t2400\nend\n")
	p := FromSnapshot(s)
	checkTotals(t, "liveness off", p, reportTotals(s))
	if p.Default != AllocSpace {
		t.Errorf("default %s", p.Default)
	}
}

// TestFromSnapshotHookFixture: the Object.<init> hook fixture, whose report figures are known
// exactly (fixtures/snapshots/README.md).
func TestFromSnapshotHookFixture(t *testing.T) {
	s, err := snapshot.ReadFile(filepath.Join(fixtures.Dir(), "snapshots", "objinit.snapshot"))
	if err != nil {
		t.Fatal(err)
	}
	checkTotals(t, "objinit.snapshot", FromSnapshot(s), reportTotals(s))
}

func TestMethodFrameOf(t *testing.T) {
	for _, c := range []struct {
		method     string
		line       int
		name, file string
		wantLine   int
	}{
		{"demo.lib.TextTable.line([Ljava/lang/String;)Ljava/lang/String;", 42, "demo.lib.TextTable.line(String[])", "demo/lib/TextTable.java", 42},
		{"a.b.Foo$Inner.<init>(IJ[[DLjava/util/Map$Entry;)V", -1, "a.b.Foo$Inner.<init>(int, long, double[][], Map$Entry)", "a/b/Foo.java", 0},
		{"Top.<clinit>()V", 3, "Top.<clinit>()", "Top.java", 3},
		{"a.$Gen$1.run()V", 1, "a.$Gen$1.run()", "a/$Gen.java", 1},
		{UnknownMethod, -1, UnknownMethod, "", 0},
		{"<ambiguous: a.B.m()V | c.D.n(I)V>", 5, "<ambiguous: a.B.m()V | c.D.n(I)V>", "", 5},
		{"a.B.m(Q)V", 1, "a.B.m(Q)V", "", 1},
	} {
		f := MethodFrameOf(c.method, c.line)
		if f.Name != c.name || f.File != c.file || f.Line != c.wantLine || f.Method != c.method || f.Kind != MethodFrame {
			t.Errorf("MethodFrameOf(%q, %d) = %+v, want name %q file %q line %d", c.method, c.line, f, c.name, c.file, c.wantLine)
		}
	}
}

func TestCheckValid(t *testing.T) {
	good := func() *Profile { return FromSnapshot(readSnapshot(t, mixed)) }
	for name, spoil := range map[string]func(p *Profile){
		"no types":           func(p *Profile) { p.Types = nil },
		"repeated type":      func(p *Profile) { p.Types[1] = p.Types[0] },
		"unknown default":    func(p *Profile) { p.Default = "cpu" },
		"short values":       func(p *Profile) { p.Samples[2].Values = p.Samples[2].Values[:1] },
		"method leaf":        func(p *Profile) { p.Samples[0].Stack = p.Samples[0].Stack[1:] },
		"type below leaf":    func(p *Profile) { p.Samples[0].Stack[1].Kind = TypeFrame },
		"frame without name": func(p *Profile) { p.Samples[1].Stack[1].Name = "" },
	} {
		p := good()
		spoil(p)
		if err := p.CheckValid(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := good().CheckValid(); err != nil {
		t.Error(err)
	}
}

func TestCollapsed(t *testing.T) {
	p := FromSnapshot(readSnapshot(t, mixed))
	var b bytes.Buffer
	if err := p.WriteCollapsed(&b, StackOptions{Type: AllocSpace, Accounts: true}); err != nil {
		t.Fatal(err)
	}
	want := "[<unaccounted>];(unknown method);site#99 16\n" +
		"[com.acme.*];com.acme.A.grid(int, int);int[] 4000\n" +
		"[com.acme.*];com.acme.A.grid(int, int);int[][] (reference levels) 320\n" +
		"[com.acme.*];com.acme.A.run(String[], int);java.lang.String 2400\n" +
		"[com.acme.*];org.lib.B$Buf.grow(int);byte[] 168\n" +
		"[org.lib];org.lib.B$Buf.grow(int);byte[] 16448\n"
	if b.String() != want {
		t.Errorf("collapsed alloc_space:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := p.WriteCollapsed(&b, StackOptions{Type: AllocObjects, Lines: true}); err != nil {
		t.Fatal(err)
	}
	// Without account frames the library's two rows are one stack; the unknown-size row counts
	// its objects.
	for _, w := range []string{"org.lib.B$Buf.grow(int);byte[] 7\n", "com.acme.A.make():14;com.acme.Weird 7\n", "com.acme.A.run(String[], int):10;java.lang.String 100\n"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("collapsed alloc_objects with lines lacks %q:\n%s", w, b.String())
		}
	}
	if got := sumCollapsed(t, b.String(), 1); got != 170 {
		t.Errorf("collapsed alloc_objects sum %d, want 170", got)
	}
	if err := p.WriteCollapsed(&b, StackOptions{Type: "cpu"}); err == nil || !strings.Contains(err.Error(), "alloc_objects, alloc_space, inuse_objects, inuse_space") {
		t.Errorf("unknown type: %v", err)
	}
}

// sumCollapsed sums column col (from 1, counted from the line's end) of collapsed stacks.
func sumCollapsed(t *testing.T, text string, col int) int64 {
	t.Helper()
	var sum int64
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		var v int64
		for _, c := range f[len(f)-col] {
			if c < '0' || c > '9' {
				t.Fatalf("line %q: value %q", line, f[len(f)-col])
			}
			v = 10*v + int64(c-'0')
		}
		sum += v
	}
	return sum
}

func TestFlame(t *testing.T) {
	p := FromSnapshot(readSnapshot(t, mixed))
	root, err := p.Flame(StackOptions{Accounts: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Types {
		if root.Values[i] != p.Total(i) {
			t.Errorf("root %s %d, total %d", p.Types[i].Type, root.Values[i], p.Total(i))
		}
	}
	if root.Name != RootName || root.Kind != NodeRoot || len(root.Children) != 3 {
		t.Fatalf("root %+v", root)
	}
	// Widest first by the default type, inuse_space: org.lib holds 8224 live bytes.
	if a := root.Children[0]; a.Name != "[org.lib]" || a.Kind != NodeAccount || a.Children[0].Kind != NodeMethod || a.Children[0].File != "org/lib/B.java" || a.Children[0].Children[0].Kind != NodeType {
		t.Errorf("first account %+v", a)
	}
	var check func(n *Node)
	check = func(n *Node) {
		if len(n.Children) == 0 {
			return
		}
		sum := make([]int64, len(n.Values))
		for _, c := range n.Children {
			for i, v := range c.Values {
				sum[i] += v
			}
			check(c)
		}
		for i := range sum {
			if sum[i] != n.Values[i] {
				t.Errorf("node %s: children sum %v, node %v", n.Name, sum, n.Values)
			}
		}
	}
	check(root)
	d, _, err := Diff(p, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Flame(StackOptions{}); err == nil {
		t.Error("flame graph of a difference profile accepted")
	}
}

func TestDiff(t *testing.T) {
	s := readSnapshot(t, mixed)
	base := readSnapshot(t, strings.Replace(strings.Replace(mixed, "alloc\t1\t1\t0\t100\t0\t2400\t10\t240", "alloc\t1\t1\t0\t40\t0\t960\t4\t96", 1), "liveness\tall\n", "", 1))
	base.Liveness = false // a run without liveness: inuse_* are dropped
	p, b := FromSnapshot(s), FromSnapshot(base)
	d, dropped, err := Diff(p, b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(dropped, ",") != "inuse_objects,inuse_space" || len(d.Types) != 2 || d.Default != AllocSpace {
		t.Errorf("dropped %v, types %v, default %s", dropped, d.Types, d.Default)
	}
	if got := d.Total(d.Index(AllocSpace)); got != 2400-960 {
		t.Errorf("net alloc_space %d, want %d", got, 2400-960)
	}
	if got := d.Total(d.Index(AllocObjects)); got != 60 {
		t.Errorf("net alloc_objects %d, want 60", got)
	}
	var out bytes.Buffer
	if err := d.WriteCollapsed(&out, StackOptions{Type: AllocSpace}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "com.acme.A.run(String[], int);java.lang.String 960 2400\n") || sumCollapsed(t, out.String(), 1)-sumCollapsed(t, out.String(), 2) != 1440 {
		t.Errorf("differential collapsed stacks:\n%s", out.String())
	}
	if _, _, err := Diff(d, p); err == nil {
		t.Error("diff of a difference profile accepted")
	}
}
