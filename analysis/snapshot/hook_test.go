package snapshot

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// objinitFixture is a run under --object-init with liveness; fixtures/snapshots/README.md
// derives its figures.
var objinitFixture = filepath.Join("..", "..", "fixtures", "snapshots", "objinit.snapshot")

func TestInitRowsStayOutOfTotals(t *testing.T) {
	s, err := ReadFile(objinitFixture)
	if err != nil {
		t.Fatal(err)
	}
	rep := s.Summarize(0)
	want := Totals{Objects: 214, Arrays: 5, Elements: 500, Bytes: 4424, Live: 97, LiveBytes: 1736, Reclaimed: 122}
	if rep.Total != want {
		t.Errorf("total %+v,\nwant  %+v (rewritten sites only)", rep.Total, want)
	}
	byName := map[string]AccountReport{}
	for _, a := range rep.Accounts {
		byName[a.Name] = a
	}
	acct, unacc := byName["agentfix.objinit.*"], byName["<unaccounted>"]
	if acct.Totals != want {
		t.Errorf("account totals %+v", acct.Totals)
	}
	for _, list := range [][]Entry{acct.TopTypes, acct.TopMethods, acct.TopSites, unacc.TopTypes, unacc.TopSites} {
		for _, e := range list {
			if strings.Contains(e.Name, "<Object.<init>>") || strings.Contains(e.Name, "ArrayList") {
				t.Errorf("an init row in a top list: %+v", e)
			}
		}
	}
	if unacc.Totals != (Totals{}) {
		t.Errorf("<unaccounted> has init rows only, its totals must be zero: %+v", unacc.Totals)
	}

	h := acct.Hook
	if h == nil {
		t.Fatal("no hook view for agentfix.objinit.*")
	}
	checks := []struct {
		what      string
		got, want Totals
	}{
		{"constructed", h.Constructed, Totals{Objects: 261, Bytes: 4856, Live: 111, LiveBytes: 2056, Reclaimed: 150}},
		{"unnamed (reflect, lambda)", h.Unnamed, Totals{Objects: 60, Bytes: 960, Live: 60, LiveBytes: 960}},
		// 20 Point + 10 Made + 15 String + 2 of other classes.
		{"not seen", h.NotSeen, Totals{Objects: 47, Bytes: 1032, Live: 14, LiveBytes: 320, Reclaimed: 33}},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %+v\nwant %+v", c.what, c.got, c.want)
		}
	}
	var order []string
	notSeen := map[string]int64{}
	for _, c := range h.Classes {
		order = append(order, strings.TrimPrefix(c.Name, "agentfix.objinit.Main"))
		notSeen[c.Name] = c.NotSeen.Objects
	}
	wantOrder := "$Widget $Point java.lang.String $$Lambda$14/0x0000000800c03000 $Made (other classes: more than 7) $Plain"
	if got := strings.Join(order, " "); got != wantOrder {
		t.Errorf("classes, most bytes not seen first:\n%s\nwant\n%s", got, wantOrder)
	}
	if notSeen["agentfix.objinit.Main$Plain"] != 0 || notSeen["agentfix.objinit.Main$Point"] != 20 ||
		notSeen["java.lang.String"] != 15 || notSeen["(other classes: more than 7)"] != 2 {
		t.Errorf("per class not seen at a named site: %v", notSeen)
	}
	for _, c := range h.Classes {
		if c.Name == "agentfix.objinit.Main$Point" {
			if w := (Totals{Objects: 20, Bytes: 480, Live: 10, LiveBytes: 240, Reclaimed: 10}); c.NotSeen != w {
				t.Errorf("Point not seen %+v, want %+v", c.NotSeen, w)
			}
		}
	}
	if u := unacc.Hook; u == nil || u.NotSeen != (Totals{Objects: 7, Bytes: 168, Live: 7, LiveBytes: 168}) {
		t.Errorf("<unaccounted> hook view: %+v", u)
	}
	if rep.Hook == nil || rep.Hook.Constructed.Objects != 268 || rep.Hook.NotSeen.Objects != 54 || rep.Hook.NotSeen.Bytes != 1200 {
		t.Errorf("report hook view: %+v", rep.Hook)
	}
	if top := s.Summarize(2); len(top.Accounts[0].Hook.Classes) != 2 || top.Accounts[0].Hook.NotSeen != h.NotSeen {
		t.Errorf("--top 2 cuts the class list, not the figures: %+v", top.Accounts[0].Hook)
	}
}

func TestNoHookViewWithoutInitRows(t *testing.T) {
	s, err := Read(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	rep := s.Summarize(0)
	if rep.Hook != nil {
		t.Errorf("hook view without init rows: %+v", rep.Hook)
	}
	for _, a := range rep.Accounts {
		if a.Hook != nil {
			t.Errorf("%s: hook view without init rows", a.Name)
		}
	}
}

// TestSettleAcrossAccounts: objects constructed under one account and counted by sites of
// another (reflection and deserialization in the JDK, under '*' with --jdk) are taken off where
// they were constructed, so that what no site saw adds up over accounts to the sums over
// classes (issue 37: a compiler's report overstated it by 1.3 million objects).
func TestSettleAcrossAccounts(t *testing.T) {
	var b strings.Builder
	b.WriteString("# heapledger snapshot 2\nreason\texit\npid\t1\naccount\t1\tapp\naccount\t2\t*\n")
	for _, l := range []string{
		"site\t1\tobject\tapp.Plain\tapp.Main.main()V\t4\t1", "site\t2\treflect\t(reflective object)\tapp.Main.main()V\t9\t2",
		"site\t3\tinit\tapp.Plain\t<Object.<init>>\t-1\t-1", "site\t4\tinit\tapp.Widget\t<Object.<init>>\t-1\t-1",
		"site\t5\tinit\tapp.Point\t<Object.<init>>\t-1\t-1",
	} {
		b.WriteString(l + "\n")
	}
	for _, r := range []struct{ account, site, count int }{
		{1, 1, 100}, {1, 3, 90}, {2, 3, 10}, // Plain: 100 new in app; 10 constructed under '*'
		{1, 2, 50}, {2, 4, 50}, // Widget: 50 by the app's reflect site, constructed in the JDK
		{2, 5, 7}, // Point: made where no site is
	} {
		fmt.Fprintf(&b, "alloc\t%d\t%d\t0\t%d\t0\t%d\t-\t-\t-\t-\t-\t-\n", r.account, r.site, r.count, 16*r.count)
	}
	b.WriteString("end\n")
	s, err := Read(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	rep := s.Summarize(0)
	got := map[string]int64{}
	for _, a := range rep.Accounts {
		if a.Hook != nil {
			got[a.Name] = a.Hook.NotSeen.Objects
		}
	}
	if got["app"] != 0 || got["*"] != 7 || rep.Hook.NotSeen.Objects != 7 {
		t.Errorf("not seen by account %v, in all %d; want app 0, * 7 (the Points), in all 7", got, rep.Hook.NotSeen.Objects)
	}
}

func TestShareOut(t *testing.T) {
	for _, c := range []struct {
		total   int64
		weights []int64
		want    []int64
	}{
		{10, []int64{5, 5}, []int64{5, 5}},
		{3, []int64{5, 5}, []int64{2, 1}},
		{7, []int64{1, 2, 4}, []int64{1, 2, 4}},
		{0, []int64{1, 2}, []int64{0, 0}},
		{1 << 40, []int64{1 << 41, 1 << 41}, []int64{1 << 39, 1 << 39}},
	} {
		got := shareOut(c.total, c.weights)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("shareOut(%d, %v) = %v, want %v", c.total, c.weights, got, c.want)
		}
	}
}

// hookSnap is a version-2 snapshot of account 1 with an object site (1) and a reflect site (2)
// and the init row (3) of the class both make, with the given live counts.
func hookSnap(uptime int, atNew, reflective, constructed int64) *Snapshot {
	var b strings.Builder
	fmt.Fprintf(&b, "# heapledger snapshot 2\nreason\tinterval\npid\t1\nuptime_ms\t%d\nliveness\tall\naccount\t1\tcom.acme\n", uptime)
	b.WriteString("site\t1\tobject\tcom.acme.Conn\tcom.acme.Pool.open()V\t4\t17\n")
	b.WriteString("site\t2\treflect\t(reflective object)\tcom.acme.Pool.load()V\t9\t30\n")
	b.WriteString("site\t3\tinit\tcom.acme.Conn\t<Object.<init>>\t-1\t-1\n")
	for site, live := range []int64{atNew, reflective, constructed} {
		fmt.Fprintf(&b, "alloc\t1\t%d\t0\t%d\t0\t%d\t%d\t%d\t0\t0\t0\t1\n", site+1, 1000, 32000, live, 32*live)
	}
	b.WriteString("end\n")
	return mustRead(b.String(), fmt.Sprintf("hook@%d", uptime))
}

func TestLeaksOfInitRowsAreWhatNoNamedSiteSaw(t *testing.T) {
	// The new site leaks Conns, the hook sees the same ones: one leak, at the site.
	var snaps []*Snapshot
	for i, live := range []int64{10, 20, 30, 40} {
		snaps = append(snaps, hookSnap(1000*(i+1), live, 0, live))
	}
	got, _, err := Leaks(snaps, DefaultLeakOptions)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Hook || got[0].Site != "com.acme.Pool.open()V line 17" {
		t.Fatalf("want the new site's leak only, not the hook's second view of it: %+v", got)
	}
	// Conns made elsewhere (deserialized, say) leak beside a steady new site: the hook's leak,
	// with only the objects no new site counted.
	snaps = nil
	for i, live := range []int64{10, 20, 30, 40} {
		snaps = append(snaps, hookSnap(1000*(i+1), 5, 0, 5+live))
	}
	got, _, err = Leaks(snaps, DefaultLeakOptions)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].Hook || got[0].Type != "com.acme.Conn" || fmt.Sprint(got[0].Live) != "[10 20 30 40]" ||
		fmt.Sprint(got[0].LiveBytes) != "[320 640 960 1280]" || got[0].Site != HookLeakSite {
		t.Fatalf("want the hook's leak of 10→40 Conns no new site counted: %+v", got)
	}
	// Made by Constructor.newInstance: the reflect site names no class, so its leak and the
	// hook's view of the same objects are both listed, the latter marked as the hook's.
	snaps = nil
	for i, live := range []int64{10, 20, 30, 40} {
		snaps = append(snaps, hookSnap(1000*(i+1), 0, live, live))
	}
	got, _, err = Leaks(snaps, DefaultLeakOptions)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Hook == got[1].Hook {
		t.Fatalf("want the reflect site's leak and the hook's: %+v", got)
	}
}
