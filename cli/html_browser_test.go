package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/chromium"
	"github.com/heapledger/heapledger/internal/testenv"
)

// needBrowser starts a headless Chromium for the test: skipped without chromium and
// chromedriver outside CI, failed in CI (CI=true), which must never skip the browser checks.
func needBrowser(t *testing.T) *chromium.Browser {
	t.Helper()
	if _, _, err := chromium.Programs(); err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	b, err := chromium.Start(chromium.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// pageTotals are the figures a report's flame graphs must show at their roots: the text
// report's total bytes and live bytes.
type pageTotals struct {
	Bytes, LiveBytes int64
	Liveness         bool
	Snapshots        int    // points the chart over time must have (0: no chart)
	Search, Frame    string // a search term and the frame it must highlight
}

// browserProblems loads the report at path and says what is wrong with it: console errors, a
// report that did not draw, a resource it fetched (it must work offline), a flame graph whose
// root or leaves do not add up to the report's totals, a search that highlights nothing, a
// chart over time without one point per snapshot.
func browserProblems(t *testing.T, b *chromium.Browser, path string, want pageTotals) []string {
	t.Helper()
	b.Logs() // drop what an earlier page logged
	if err := b.Open("file://" + path); err != nil {
		t.Fatal(err)
	}
	var problems []string
	waitErr := b.Wait("var r = window.heapledgerReport; return !!(r && (r.ready || r.error))", time.Minute)
	logs, err := b.Logs()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		if l.Level == "SEVERE" {
			problems = append(problems, "console error: "+l.Message)
		}
	}
	if waitErr != nil {
		return append(problems, "the report never drew: "+waitErr.Error())
	}
	var state struct {
		Error     *string
		Resources int
		Flames    map[string]struct{ Root, Leaves float64 }
		Points    []int
	}
	err = b.Eval(&state, `
		var r = window.heapledgerReport, out = {error: r.error, resources: performance.getEntriesByType("resource").length, flames: {}, points: null};
		for (var k in r.flames) {
			var root = d3.select(r.flames[k].element).datum(), leaves = 0;
			root.leaves().forEach(function (n) { leaves += n.value; });
			out.flames[k] = {root: root.value, leaves: leaves};
		}
		if (r.overTime) out.points = r.overTime.data.map(function (s) { return s.length; });
		return out;`)
	if err != nil {
		t.Fatal(err)
	}
	if state.Error != nil {
		problems = append(problems, "the page failed: "+*state.Error)
	}
	if state.Resources > 0 {
		problems = append(problems, fmt.Sprintf("the page fetched %d resources; it must need none", state.Resources))
	}
	check := func(key string, total int64) {
		f, ok := state.Flames[key]
		switch {
		case !ok:
			problems = append(problems, "no "+key+" flame graph")
		case int64(f.Root) != total || int64(f.Leaves) != total:
			problems = append(problems, fmt.Sprintf("%s flame graph: root %v, leaves %v; the report's total %d", key, f.Root, f.Leaves, total))
		}
	}
	check("alloc", want.Bytes)
	if want.Liveness && want.LiveBytes > 0 {
		check("live", want.LiveBytes)
	} else if _, ok := state.Flames["live"]; ok {
		problems = append(problems, "a live flame graph without live objects")
	}
	if want.Snapshots > 1 {
		if len(state.Points) < 2 {
			problems = append(problems, fmt.Sprintf("chart over time: series %v", state.Points))
		}
		for _, n := range state.Points {
			if n != want.Snapshots {
				problems = append(problems, fmt.Sprintf("chart over time: series of %v points, want %d (one per snapshot)", state.Points, want.Snapshots))
				break
			}
		}
	} else if state.Points != nil {
		problems = append(problems, "a chart over time of one snapshot")
	}
	if want.Search != "" && len(state.Flames) > 0 {
		problems = append(problems, searchProblems(t, b, want.Search, want.Frame)...)
	}
	if _, ok := state.Flames["alloc"]; ok {
		problems = append(problems, zoomProblems(t, b)...)
	}
	return problems
}

// zoomProblems clicks the narrowest frame of the allocation graph's first level with two or
// more frames and checks that it then spans the graph, that the widest frame beside it is no
// longer drawn, and that "reset zoom" gives it back its width. Frames are told apart by the
// ids d3-flame-graph gives them: a name may stand in several places.
func zoomProblems(t *testing.T, b *chromium.Browser) []string {
	t.Helper()
	const frames = `var gs = Array.from(window.heapledgerReport.flames.alloc.element.querySelectorAll("g"))
		.filter(function (g) { return g.__data__; });
		function byID(id) { return gs.find(function (g) { return g.__data__.id === id; }); }
		function width(g) { return +g.getAttribute("width"); }`
	var before struct {
		Zoomed, Sibling struct {
			ID   int
			Name string
		}
		Width, Full float64
	}
	err := b.Eval(&before, frames+`
		var root = gs.find(function (g) { return g.__data__.depth === 0; });
		var level = [1, 2, 3].map(function (d) { return gs.filter(function (g) { return g.__data__.depth === d; }); })
			.find(function (l) { return l.length > 1; });
		if (!level) return null;
		level.sort(function (x, y) { return x.__data__.value - y.__data__.value; });
		var z = level[0], s = level[level.length - 1];
		var out = {zoomed: {id: z.__data__.id, name: z.getAttribute("name")}, sibling: {id: s.__data__.id, name: s.getAttribute("name")},
			width: width(z), full: width(root)};
		z.dispatchEvent(new MouseEvent("click", {bubbles: true}));
		return out;`)
	if err != nil {
		t.Fatal(err)
	}
	if before.Full == 0 {
		return []string{"no level of the allocation graph has two frames to zoom into"}
	}
	var problems []string
	zoomed := frames + `var z = byID(arguments[0]); return !!z && Math.abs(width(z) - arguments[1]) < 1 && !byID(arguments[2]);`
	if err := b.Wait(zoomed, 10*time.Second, before.Zoomed.ID, before.Full, before.Sibling.ID); err != nil {
		problems = append(problems, fmt.Sprintf("zooming into %q (%.0f px of %.0f) did not make it span the graph and hide %q",
			before.Zoomed.Name, before.Width, before.Full, before.Sibling.Name))
	}
	if err := b.Eval(nil, `window.heapledgerReport.flames.alloc.element.parentNode.querySelector(".flame-reset").click();`); err != nil {
		t.Fatal(err)
	}
	back := frames + `var z = byID(arguments[0]); return !!z && Math.abs(width(z) - arguments[1]) < 1 && !!byID(arguments[2]);`
	if err := b.Wait(back, 10*time.Second, before.Zoomed.ID, before.Width, before.Sibling.ID); err != nil {
		problems = append(problems, fmt.Sprintf("reset zoom did not give %q back its width (%.0f px) and draw %q again",
			before.Zoomed.Name, before.Width, before.Sibling.Name))
	}
	return problems
}

// searchProblems types term into the allocation graph's search box and checks that the frame
// named frame, and only frames matching term, turn the highlight colour.
func searchProblems(t *testing.T, b *chromium.Browser, term, frame string) []string {
	t.Helper()
	if err := b.Eval(nil, `var f = window.heapledgerReport.flames.alloc; f.search.value = arguments[0];
		f.search.dispatchEvent(new Event("input"));`, term); err != nil {
		t.Fatal(err)
	}
	highlighted := `var out = [];
		window.heapledgerReport.flames.alloc.element.querySelectorAll("g").forEach(function (g) {
			var r = g.querySelector("rect");
			if (r && r.getAttribute("fill") === "#e600e6") out.push(g.getAttribute("name"));
		});
		return out;`
	if err := b.Wait("return ("+"function () {"+highlighted+"})().length > 0", 10*time.Second); err != nil {
		return []string{fmt.Sprintf("search %q highlighted nothing", term)}
	}
	var names []string
	if err := b.Eval(&names, highlighted); err != nil {
		t.Fatal(err)
	}
	var problems []string
	found := false
	for _, n := range names {
		found = found || n == frame
		if !strings.Contains(strings.ToLower(n), strings.ToLower(term)) {
			problems = append(problems, fmt.Sprintf("search %q highlighted %q", term, n))
		}
	}
	if !found {
		problems = append(problems, fmt.Sprintf("search %q highlighted %v, not %q", term, names, frame))
	}
	var details string
	b.Eval(&details, `return window.heapledgerReport.flames.alloc.element.parentNode.querySelector(".flame-details").textContent`)
	if !strings.Contains(details, "match") {
		problems = append(problems, fmt.Sprintf("search details say %q", details))
	}
	return problems
}

// chainDump writes a small heap dump whose first object holds a chain of the others, a leak
// suspect for the report's heap section.
func chainDump(t *testing.T, dir string) string {
	t.Helper()
	b := hproftest.New(8)
	b.Chain(0x100, 0x120, 0x128)
	p := filepath.Join(dir, "chain.hprof")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHTMLReportInBrowser draws the HTML report of the series fixture (three snapshots of one
// run with liveness) and a heap dump in headless Chromium: no console error, nothing fetched,
// flame-graph roots equal to the text report's totals, a search that highlights the cache's
// frame, a point per snapshot over time, the growing site and the dump's suspect on the page.
// Reports broken on purpose (a library missing, a wrong total) must fail the same checks.
func TestHTMLReportInBrowser(t *testing.T) {
	b := needBrowser(t)
	dir := t.TempDir()
	var series []string
	for i := 1; i <= 3; i++ {
		series = append(series, filepath.Join(fixtures.Dir(), "snapshots", fmt.Sprintf("series-%d.snapshot", i)))
	}
	out := filepath.Join(dir, "report.html")
	// Given out of order, and the dump among them: the report orders them itself.
	stdout, _, err := runCLI(t, append([]string{"html", "-o", out, series[2], chainDump(t, dir)}, series[:2]...)...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, out) {
		t.Errorf("html does not print the report's path: %q", stdout)
	}
	last, err := snapshot.ReadFile(series[2])
	if err != nil {
		t.Fatal(err)
	}
	tot := last.Summarize(0).Total
	if tot.Bytes != 110400 || tot.LiveBytes != 13600 {
		t.Fatalf("the fixture's totals are not those its README gives: %+v", tot)
	}
	want := pageTotals{Bytes: tot.Bytes, LiveBytes: tot.LiveBytes, Liveness: true, Snapshots: 3,
		Search: "cache.put", Frame: "com.acme.Cache.put(Object)"}
	if p := browserProblems(t, b, out, want); len(p) > 0 {
		t.Errorf("the report of the series fixture:\n  %s", strings.Join(p, "\n  "))
	}
	var text string
	if err := b.Eval(&text, "return document.body.innerText"); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"com.acme.*", "org.lib", "Growing allocation sites", "com.acme.Cache.put(Ljava/lang/Object;)V line 40",
		"0 → 200", "Leak suspects", "app.Node", "Retained size by class", "d3-flame-graph 5.0.0 (Apache-2.0)"} {
		if !strings.Contains(text, w) {
			t.Errorf("the page does not show %q", w)
		}
	}

	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	broken := map[string]string{
		"no d3-flame-graph": regexp.MustCompile(`(?s)<script data-lib="d3-flame-graph">.*?</script>`).ReplaceAllString(string(page), ""),
		"no d3":             regexp.MustCompile(`(?s)<script data-lib="d3">.*?</script>`).ReplaceAllString(string(page), ""),
		"no uPlot":          regexp.MustCompile(`(?s)<script data-lib="uPlot">.*?</script>`).ReplaceAllString(string(page), ""),
		"a wrong total": regexp.MustCompile(`"flame":\{"n":"all","k":"r","vs":\[(\d+),(\d+)`).
			ReplaceAllString(string(page), `"flame":{"n":"all","k":"r","vs":[$1,1$2`),
	}
	for what, html := range broken {
		if html == string(page) {
			t.Fatalf("%s: the report did not change", what)
		}
		p := filepath.Join(dir, strings.ReplaceAll(what, " ", "-")+".html")
		if err := os.WriteFile(p, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		if problems := browserProblems(t, b, p, want); len(problems) == 0 {
			t.Errorf("a report with %s passes the browser checks", what)
		} else {
			t.Logf("a report with %s: %s", what, strings.Join(problems, "; "))
		}
	}
}

// TestHTMLReportOneSnapshot: a snapshot without liveness has one flame graph and no chart
// over time; a dump alone has a page of its own.
func TestHTMLReportOneSnapshot(t *testing.T) {
	b := needBrowser(t)
	dir := t.TempDir()
	snap := filepath.Join(dir, "off.snapshot")
	os.WriteFile(snap, []byte("# heapledger snapshot 1\nreason\texit\nprogram\tacme.Main\npid\t9\naccount\t1\tcom.acme\n"+
		"site\t1\tobject\tjava.lang.String\tcom.acme.A.run()V\t3\t10\nsite\t2\tarray\tint[]\tcom.acme.A.fill(I)[I\t8\t20\n"+
		"alloc\t1\t1\t0\t100\t0\t2400\nalloc\t1\t2\t0\t4\t400\t1664\nend\n"), 0o644)
	out := filepath.Join(dir, "one.html")
	if _, _, err := runCLI(t, "html", "-o", out, snap); err != nil {
		t.Fatal(err)
	}
	if p := browserProblems(t, b, out, pageTotals{Bytes: 2400 + 1664, Search: "fill", Frame: "com.acme.A.fill(int)"}); len(p) > 0 {
		t.Errorf("the report of one snapshot without liveness:\n  %s", strings.Join(p, "\n  "))
	}
	dumpOnly := filepath.Join(dir, "dump.html")
	if _, _, err := runCLI(t, "html", "-o", dumpOnly, chainDump(t, dir)); err != nil {
		t.Fatal(err)
	}
	b.Logs()
	if err := b.Open("file://" + dumpOnly); err != nil {
		t.Fatal(err)
	}
	if err := b.Wait("var r = window.heapledgerReport; return !!(r && (r.ready || r.error))", time.Minute); err != nil {
		t.Fatal(err)
	}
	var text string
	b.Eval(&text, "return (window.heapledgerReport.error || '') + document.body.innerText")
	if !strings.Contains(text, "Leak suspects") || strings.Contains(text, "Flame graphs") || strings.Contains(text, "could not be drawn") {
		t.Errorf("the report of a dump alone:\n%s", text)
	}
	if logs, _ := b.Logs(); len(logs) > 0 {
		t.Errorf("console: %v", logs)
	}
}

// TestHTMLUsage: what html refuses, with messages that say why.
func TestHTMLUsage(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, []byte("hello\n"), 0o644)
	dump := chainDump(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"html"}, "html needs one or more SNAPSHOT files"},
		{[]string{"html", other}, "neither a heapledger snapshot nor an HPROF heap dump"},
		{[]string{"html", dump, dump}, "two heap dumps"},
		{[]string{"html", "--threshold", "0", dump}, "--threshold 0"},
		{[]string{"html", filepath.Join(dir, "missing.snapshot")}, "missing.snapshot"},
	} {
		_, _, err := runCLI(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
