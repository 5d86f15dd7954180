package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/testenv"
)

// profileTypes are the sample types a profile of s has, with the text report's totals in them.
func reportProfileTotals(t *testing.T, path string) map[string]int64 {
	t.Helper()
	var rep struct {
		Liveness bool
		Total    snapshot.Totals
	}
	cliJSON(t, &rep, "report", "--json", path)
	tot := rep.Total
	m := map[string]int64{"alloc_objects": tot.Objects + tot.Arrays, "alloc_space": tot.Bytes}
	if rep.Liveness {
		m["inuse_objects"], m["inuse_space"] = tot.Live, tot.LiveBytes
	}
	return m
}

// checkProfileTotals writes SNAPSHOT as pprof and as collapsed stacks of every sample type
// and compares each total with the text report's (report --json prints the same figures);
// with goTool it also reads the pprof file with `go tool pprof -top`, whose total must be the
// same. It returns the pprof file.
func checkProfileTotals(t *testing.T, path string, goTool bool) string {
	t.Helper()
	want := reportProfileTotals(t, path)
	pb := filepath.Join(t.TempDir(), "p.pb.gz")
	if _, _, err := runCLI(t, "report", "--format", "pprof", "-o", pb, path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(pb)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(pp.SampleType) != len(want) {
		t.Errorf("%s: pprof has %d sample types, want %d", path, len(pp.SampleType), len(want))
	}
	for i, st := range pp.SampleType {
		var sum int64
		for _, s := range pp.Sample {
			sum += s.Value[i]
		}
		if w, ok := want[st.Type]; !ok || sum != w {
			t.Errorf("%s: pprof %s total %d, the report's %d", path, st.Type, sum, w)
		}
		if goTool {
			if got := pprofTopTotal(t, pb, st.Type); got != want[st.Type] {
				t.Errorf("%s: go tool pprof -top -sample_index=%s total %d, the report's %d", path, st.Type, got, want[st.Type])
			}
		}
	}
	for typ, w := range want {
		out, _, err := runCLI(t, "report", "--format", "collapsed", "--sample-type", typ, path)
		if err != nil {
			t.Fatal(err)
		}
		if got := collapsedSum(t, out, 1); got != w {
			t.Errorf("%s: collapsed %s sum %d, the report's %d", path, typ, got, w)
		}
	}
	return pb
}

// collapsedSum sums column col (counted from a line's end, from 1) of collapsed stacks.
func collapsedSum(t *testing.T, text string, col int) int64 {
	t.Helper()
	var sum int64
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseInt(f[len(f)-col], 10, 64)
		if err != nil {
			t.Fatalf("collapsed line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// goTool returns the go command, which `go tool pprof` needs: skipped without it outside CI.
func goTool(t *testing.T) string {
	t.Helper()
	return testenv.Tool(t, "go")
}

var pprofTotal = regexp.MustCompile(`of (-?\d+)B? total`)

// pprofTopTotal is the total `go tool pprof -top` reports for sample type typ, in bytes or
// objects as they are.
func pprofTopTotal(t *testing.T, pb, typ string) int64 {
	t.Helper()
	out := goPprof(t, "-top", "-unit=B", "-sample_index="+typ, pb)
	m := pprofTotal.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("go tool pprof -top printed no total:\n%s", out)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

func goPprof(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(goTool(t), append([]string{"tool", "pprof"}, args...)...)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestReportProfilesMatchReport: the pprof profile and the collapsed stacks of the profiles
// fixture (every kind of row) total what the text report does, and go tool pprof reads the
// profile with those totals, its Java methods and labels.
func TestReportProfilesMatchReport(t *testing.T) {
	path := filepath.Join(fixtures.Dir(), "snapshots", "profiles.snapshot")
	want := reportProfileTotals(t, path)
	if want["alloc_objects"] != 170 || want["alloc_space"] != 23352 || want["inuse_objects"] != 63 || want["inuse_space"] != 12056 {
		t.Fatalf("the fixture's report totals are not those its README gives: %v", want)
	}
	pb := checkProfileTotals(t, path, true)
	traces := goPprof(t, "-traces", "-unit=B", "-sample_index=alloc_space", pb)
	for _, w := range []string{"account:  com.acme.*", "com.acme.A.run(String[], int)", "type:  com.acme.Weird", "size:  unknown", "2400B   java.lang.String"} {
		if !strings.Contains(traces, w) {
			t.Errorf("go tool pprof -traces lacks %q:\n%s", w, traces)
		}
	}
	list := goPprof(t, "-top", "-tagroot=account", "-sample_index=alloc_objects", pb)
	if !regexp.MustCompile(`165 +97\.06% +\[?com\.acme\.\*`).MatchString(list) {
		t.Errorf("go tool pprof -tagroot=account does not put the 165 objects of com.acme.* at a root:\n%s", list)
	}
	out, _, err := runCLI(t, "report", "--format", "collapsed", "--sample-type", "alloc_space", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "[org.lib];org.lib.B$Buf.grow(int);byte[] 16448\n") {
		t.Errorf("collapsed stacks lack the library's own account:\n%s", out)
	}
	out, _, err = runCLI(t, "report", "--format", "collapsed", "--by-account=false", "--lines", "--sample-type", "alloc_objects", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\ncom.acme.A.run(String[], int):10;java.lang.String 100\n") || strings.Contains(out, "[com.acme") {
		t.Errorf("collapsed stacks with --lines and no account frames:\n%s", out)
	}
}

// TestReportProfileDiff: --base gives the profile pprof's -diff_base would build from the two,
// and collapsed stacks with a base and a new column.
func TestReportProfileDiff(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(fixtures.Dir(), "snapshots", "profiles.snapshot")
	text, err := os.ReadFile(newer)
	if err != nil {
		t.Fatal(err)
	}
	older := filepath.Join(dir, "older.snapshot")
	grown := strings.Replace(string(text), "alloc\t1\t1\t0\t100\t0\t2400\t10\t240", "alloc\t1\t1\t0\t40\t0\t960\t4\t96", 1)
	if err := os.WriteFile(older, []byte(grown), 0o644); err != nil {
		t.Fatal(err)
	}
	pb := map[string]string{}
	for name, args := range map[string][]string{"diff": {"--base", older, newer}, "new": {newer}, "old": {older}} {
		pb[name] = filepath.Join(dir, name+".pb.gz")
		if _, _, err := runCLI(t, append([]string{"report", "--format", "pprof", "-o", pb[name]}, args...)...); err != nil {
			t.Fatal(err)
		}
	}
	// pprof takes percentages of the base's total with -diff_base, and so with ours.
	if got := pprofTopTotal(t, pb["diff"], "alloc_space"); got != 23352-1440 {
		t.Errorf("difference profile's total %d, want the base's %d", got, 23352-1440)
	}
	body := func(out string) string { _, b, _ := strings.Cut(out, "Showing nodes"); return b }
	ours := body(goPprof(t, "-top", "-sample_index=alloc_space", pb["diff"]))
	theirs := body(goPprof(t, "-top", "-sample_index=alloc_space", "-diff_base", pb["old"], pb["new"]))
	if ours == "" || ours != theirs {
		t.Errorf("go tool pprof -top of the difference profile:\n%s\nof -diff_base:\n%s", ours, theirs)
	}
	out, _, err := runCLI(t, "report", "--format", "collapsed", "--sample-type", "alloc_space", "--base", older, newer)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "[com.acme.*];com.acme.A.run(String[], int);java.lang.String 960 2400\n") || collapsedSum(t, out, 1)-collapsedSum(t, out, 2) != 1440 {
		t.Errorf("differential collapsed stacks:\n%s", out)
	}
}

func TestReportProfileUsage(t *testing.T) {
	path := filepath.Join(fixtures.Dir(), "snapshots", "profiles.snapshot")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "svg", path}, `--format "svg"`},
		{[]string{"--json", "--format", "pprof", path}, "disagree"},
		{[]string{"--base", path, path}, "--base needs --format pprof or collapsed"},
		{[]string{"--format", "pprof", "--sample-type", "alloc_space", path}, "--sample-type applies to --format collapsed only"},
		{[]string{"--format", "collapsed", "--top", "3", path}, "--top applies"},
		{[]string{"--format", "collapsed", "--sample-type", "cpu", path}, "sample type \"cpu\" is not in this profile"},
	} {
		_, _, err := runCLI(t, append([]string{"report"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("report %v: %v, want %q", c.args, err, c.want)
		}
	}
	// A liveness-off base: the difference keeps the alloc types and says so.
	dir := t.TempDir()
	off := filepath.Join(dir, "off.snapshot")
	os.WriteFile(off, []byte("# heapledger snapshot 1\nreason\texit\naccount\t1\tcom.acme.*\nsite\t1\tobject\tjava.lang.String\tcom.acme.A.run([Ljava/lang/String;I)V\t3\t10\nalloc\t1\t1\t0\t40\t0\t960\nend\n"), 0o644)
	out, errOut, err := runCLI(t, "report", "--format", "collapsed", "--base", off, path)
	if err != nil || !strings.Contains(errOut, "leaves out inuse_objects, inuse_space") || collapsedSum(t, out, 1)-collapsedSum(t, out, 2) != 23352-960 {
		t.Errorf("liveness-off base: %v\n%s\n%s", err, errOut, out)
	}
}

// TestReportProfileOutputFile: -o writes the file whole; a failure leaves no file behind.
func TestReportProfileOutputFile(t *testing.T) {
	path := filepath.Join(fixtures.Dir(), "snapshots", "profiles.snapshot")
	dir := t.TempDir()
	out := filepath.Join(dir, "p.folded")
	if _, _, err := runCLI(t, "report", "--format", "collapsed", "-o", out, path); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || collapsedSum(t, string(b), 1) != 12056 {
		t.Errorf("collapsed -o: %v\n%s", err, b)
	}
	bad := filepath.Join(dir, "bad.folded")
	if _, _, err := runCLI(t, "report", "--format", "collapsed", "--sample-type", "cpu", "-o", bad, path); err == nil {
		t.Fatal("unknown sample type accepted")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left files: %v", entries)
	}
}
