package htmlreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/fixtures"
)

func series(t *testing.T) []*snapshot.Snapshot {
	t.Helper()
	var out []*snapshot.Snapshot
	for _, i := range []int{3, 1, 2} { // out of order: Build orders them
		s, err := snapshot.ReadFile(filepath.Join(fixtures.Dir(), "snapshots", fmt.Sprintf("series-%d.snapshot", i)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestBuildSeries(t *testing.T) {
	p, err := Build(series(t), Options{Top: 20, Now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Latest != 2 || len(p.Snapshots) != 3 || !strings.HasSuffix(p.Snapshots[0].Path, "series-1.snapshot") || p.Snapshots[2].UptimeMS != 30000 {
		t.Errorf("snapshots %+v, latest %d", p.Snapshots, p.Latest)
	}
	if p.Generated != "2026-11-22T09:00:00Z" {
		t.Errorf("generated %s", p.Generated)
	}
	if p.Report.Total.Bytes != 110400 || p.Profile.Flame.Values[1] != 110400 || p.Profile.Flame.Values[3] != 13600 || p.Profile.Default != "inuse_space" {
		t.Errorf("latest report %+v, flame root %v", p.Report.Total, p.Profile.Flame.Values)
	}
	o := p.OverTime
	if o == nil || o.Measure != "live_bytes" || !o.XIsTime || len(o.X) != 3 || o.X[1]-o.X[0] != 10 {
		t.Fatalf("over time %+v", o)
	}
	got := map[string]string{}
	for _, a := range o.Accounts {
		got[a.Name] = fmt.Sprint(a.Values)
	}
	// com.acme.*: 100k entries of 24 bytes and 50 strings of 24 bytes, live.
	if got["com.acme.*"] != "[3600 6000 8400]" || got["org.lib"] != "[5200 5200 5200]" || o.Accounts[0].Name != "com.acme.*" {
		t.Errorf("series %v (first %s)", got, o.Accounts[0].Name)
	}
	g := p.Growing
	if g == nil || g.Error != "" || g.Total != 1 || len(g.Leaks) != 1 || g.Leaks[0].Site != "com.acme.Cache.put(Ljava/lang/Object;)V line 40" {
		t.Errorf("growing %+v", g)
	}
}

// TestBuildMixedRuns: snapshots of two runs are ordered by wall-clock time, and ranked only
// when asked.
func TestBuildMixedRuns(t *testing.T) {
	snaps := series(t)
	snaps[1].Header["pid"] = "78" // series-1 now of another process
	snaps[1].Header["time"] = "2026-11-22T09:00:00.000Z"
	p, err := Build(snaps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(p.Snapshots[2].Path, "series-1.snapshot") || !strings.Contains(p.Growing.Error, "different runs") || len(p.Growing.Leaks) != 0 {
		t.Errorf("mixed runs: order %v, growing %+v", p.Snapshots, p.Growing)
	}
	p, err = Build(snaps, Options{MixedRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Growing.Error != "" || len(p.Growing.Warnings) == 0 {
		t.Errorf("mixed runs ranked anyway: %+v", p.Growing)
	}
}

// TestBuildWithoutLiveness: the series over time is of allocated bytes, and the growing sites
// say why there are none.
func TestBuildWithoutLiveness(t *testing.T) {
	snaps := series(t)
	snaps[0].Liveness = false
	p, err := Build(snaps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.OverTime.Measure != "bytes" || !strings.Contains(p.Growing.Error, "no liveness data") {
		t.Errorf("measure %s, growing %+v", p.OverTime.Measure, p.Growing)
	}
	one, err := Build(snaps[:1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if one.OverTime != nil || one.Growing != nil {
		t.Errorf("one snapshot has a series over time")
	}
	none, err := Build(nil, Options{})
	if err != nil || none.Report != nil || none.Profile != nil || none.Latest != -1 {
		t.Errorf("no snapshot: %+v, %v", none, err)
	}
}

// TestWrite: one file holding the libraries, the page's script and the data, which reads back
// as the page; nothing loaded from elsewhere; the title escaped.
func TestWrite(t *testing.T) {
	p, err := Build(series(t), Options{Title: "leaks <b>&</b> co"})
	if err != nil {
		t.Fatal(err)
	}
	p.Heap = map[string]any{"dump": "x.hprof", "note": "</script><script>alert(1)</script>"}
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, lib := range Libraries {
		if !strings.Contains(html, `<script data-lib="`+lib.Name+`">`) && !strings.Contains(html, `<style data-lib="`+lib.Name+`">`) {
			t.Errorf("%s is not inlined", lib.Name)
		}
		if !strings.Contains(html, lib.Name+" "+lib.Version+" ("+lib.License+")") {
			t.Errorf("%s's credit is missing", lib.Name)
		}
	}
	if !strings.Contains(html, "<title>leaks &lt;b&gt;&amp;&lt;/b&gt; co</title>") {
		t.Error("title not escaped")
	}
	if regexp.MustCompile(`(?i)<(script|link|img|iframe)[^>]*\s(src|href)=`).MatchString(html) {
		t.Error("the page loads something from elsewhere")
	}
	if strings.Count(html, "</script>") != strings.Count(html, "<script") {
		t.Error("the data ended a script element early")
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="heapledger-data">(.*?)</script>`).FindStringSubmatch(html)
	if m == nil {
		t.Fatal("no data")
	}
	var back struct {
		Report   struct{ Total snapshot.Totals }
		OverTime *OverTime `json:"over_time"`
		Profile  *Profile
		Heap     any
	}
	if err := json.Unmarshal([]byte(m[1]), &back); err != nil {
		t.Fatal(err)
	}
	if back.Report.Total != p.Report.Total || len(back.OverTime.X) != 3 || back.Profile.Flame.Values[1] != 110400 {
		t.Errorf("the data does not read back: %+v", back.Report.Total)
	}
	if s, _ := back.Heap.(map[string]any)["note"].(string); s != "</script><script>alert(1)</script>" {
		t.Errorf("heap data %v", back.Heap)
	}
}

// TestVendoredLibraries: the embedded files are the ones fetch.sh names, each with its licence.
func TestVendoredLibraries(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("assets", "vendor", "fetch.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, lib := range Libraries {
		if !strings.Contains(string(script), strings.ToLower(lib.Name)+"@"+lib.Version+" ") {
			t.Errorf("fetch.sh does not fetch %s %s", lib.Name, lib.Version)
		}
		for _, f := range append([]string{lib.LicenseFile}, lib.Files...) {
			if _, err := assets.ReadFile("assets/vendor/" + f); err != nil {
				t.Errorf("%s: %v", lib.Name, err)
			}
		}
	}
	d3, _ := assets.ReadFile("assets/vendor/d3.min.js")
	if !bytes.HasPrefix(d3, []byte("// https://d3js.org v7.9.2 ")) {
		t.Errorf("d3.min.js is not d3 7.9.2: %q", d3[:40])
	}
}
