// Package rt holds the Java runtime's tests; the runtime itself is Java (src/).
package rt

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/internal/testenv"
)

// need skips outside CI and fails in CI when a tool is missing.
func need(t *testing.T, tool string) string {
	t.Helper()
	return testenv.Tool(t, tool)
}

func build(t *testing.T) string {
	t.Helper()
	javac := need(t, "javac")
	out := t.TempDir()
	var srcs []string
	for _, dir := range []string{"src", "test"} {
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.HasSuffix(p, ".java") {
				srcs = append(srcs, p)
			}
			return nil
		})
	}
	cmd := exec.Command(javac, append([]string{"--release", "8", "-nowarn", "-d", out}, srcs...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	return out
}

func TestFigure3(t *testing.T) {
	classes := build(t)
	out, err := exec.Command(need(t, "java"), "-cp", classes, "heapledger.rt.SelfTest", "figure3").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Figure 3 of "Portable profiling of memory allocation in Java": arrays and elements.
	want := `Object[2][3][5] 9 38
Object[2][3][0] 9 8
Object[2][0][5] 3 2
Object[0][3][5] 1 0
int[2][3][5] 3 8 | 6 30
int[2][3][0] 3 8 | 6 0
int[2][0][5] 3 2 | 0 0
int[0][3][5] 1 0 | 0 0
int[2][3][] 3 8
`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestSnapshotTimestamp checks the snapshot header's hand-written UTC formatter against Go's
// time package: around the epoch, leap days and centuries, negative instants, and random ones.
func TestSnapshotTimestamp(t *testing.T) {
	classes := build(t)
	var ms []int64
	for _, s := range []string{"1970-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z", "2000-02-29T12:34:56.789Z",
		"1900-03-01T00:00:00Z", "2100-02-28T23:59:59.999Z", "2400-02-29T00:00:00.001Z", "2026-11-22T10:00:00Z", "0001-01-01T00:00:00Z"} {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, tm.UnixMilli())
	}
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		const first, last = -62135596800000, 253402300799999 // 0001-01-01 to 9999-12-31
		ms = append(ms, first+rnd.Int63n(last-first+1))
	}
	var in strings.Builder
	for _, m := range ms {
		fmt.Fprintln(&in, m)
	}
	cmd := exec.Command(need(t, "java"), "-cp", classes, "heapledger.rt.SelfTest", "iso")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(ms) {
		t.Fatalf("%d lines for %d instants", len(got), len(ms))
	}
	bad := 0
	for i, m := range ms {
		want := time.UnixMilli(m).UTC().Format("2006-01-02T15:04:05.000Z")
		if got[i] != want && bad < 10 {
			t.Errorf("%d ms: got %s, want %s", m, got[i], want)
			bad++
		}
	}
}

// TestTableReadsWantedSites checks the snapshot's table reader, which cuts lines from bytes
// and drops unwanted site lines undecoded: lines across its 64 KB buffer and longer than it,
// CRLF ends, comments, a last line without a newline, non-ASCII names, and only wanted sites.
func TestTableReadsWantedSites(t *testing.T) {
	classes := build(t)
	var tab, want strings.Builder
	tab.WriteString("# heapledger table\naccount\t0\t<unaccounted>\r\naccount\t3\tcom.acme.*\n")
	want.WriteString("account 0 <unaccounted>\naccount 3 com.acme.*\n")
	wanted := map[int]bool{0: true, 1: true, 977: true, 4096: true, 15000: true, 19999: true}
	for id := 0; id < 20000; id++ {
		name := fmt.Sprintf("pkg/Cläss%d.m%s()V", id, strings.Repeat("x", id%300))
		if id == 977 {
			name = strings.Repeat("long", 40000) // 160 KB: longer than the buffer
		}
		end := "\n"
		if id%7 == 0 {
			end = "\r\n"
		}
		if id == 19999 {
			end = ""
		}
		fmt.Fprintf(&tab, "site\t%d\tobject\t%s\t%d%s", id, name, id*3, end)
		if id%1000 == 0 {
			tab.WriteString("# a comment\n\n")
		}
		if wanted[id] {
			fmt.Fprintf(&want, "site %d object|%s|%d\n", id, name, id*3)
		}
	}
	file := filepath.Join(t.TempDir(), "table.tsv")
	if err := os.WriteFile(file, []byte(tab.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-cp", classes, "heapledger.rt.SelfTest", "table", file}
	for id := range wanted {
		args = append(args, strconv.Itoa(id))
	}
	args = append(args, "25000") // wanted but absent
	out, err := exec.Command(need(t, "java"), args...).Output()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if string(out) != want.String() {
		g, w := string(out), want.String()
		if len(g) > 400 {
			g = g[:400] + "..."
		}
		if len(w) > 400 {
			w = w[:400] + "..."
		}
		t.Errorf("got\n%s\nwant\n%s", g, w)
	}
}

func TestThreadsExactTotals(t *testing.T) {
	classes := build(t)
	dir := t.TempDir()
	cmd := exec.Command(need(t, "java"), "-cp", classes, "-Dheapledger.snapshot.dir="+dir,
		"-Dheapledger.snapshot.format=both", "heapledger.rt.SelfTest", "threads", "64", "20000")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "heapledger-SelfTest-*-1.snapshot"))
	if len(snaps) != 1 {
		all, _ := os.ReadDir(dir)
		t.Fatalf("want one exit snapshot named after the program, found %v (dir has %v)", snaps, all)
	}
	if _, err := os.Stat(strings.TrimSuffix(snaps[0], ".snapshot") + ".json"); err != nil {
		t.Errorf("json snapshot missing: %v", err)
	}
	f, err := os.Open(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type key struct{ account, site, part string }
	got := map[key][3]string{}
	sc := bufio.NewScanner(f)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			if line != "# heapledger snapshot 5" {
				t.Fatalf("bad header %q", line)
			}
			first = false
		}
		fs := strings.Split(line, "\t")
		if fs[0] == "alloc" {
			got[key{fs[1], fs[2], fs[3]}] = [3]string{fs[4], fs[5], fs[6]}
		}
		if fs[0] == "dropped" && fs[1] != "0" {
			t.Errorf("runtime dropped events: %s", line)
		}
	}
	// 64 threads over accounts 1..3: 22, 21, 21 threads; each 20000 objects and 20000 int
	// arrays of lengths j%10 (sum 90000 elements per thread).
	threadsPer := map[string]int{"1": 22, "2": 21, "3": 21}
	for a, n := range threadsPer {
		if g := got[key{a, "2", "0"}][0]; g != itoa(n*20000) {
			t.Errorf("account %s objects: got %s want %d", a, g, n*20000)
		}
		if g := got[key{a, "1", "0"}]; g[0] != itoa(n*20000) || g[1] != itoa(n*90000) {
			t.Errorf("account %s arrays: got %v want %d arrays %d elements", a, g, n*20000, n*90000)
		}
		// int[len] is 16 + 4*len rounded up to 8 with compressed oops: lengths 0..9 give
		// 16,24,24,32,32,40,40,48,48,56 = 360 bytes per 10 arrays.
		if g := got[key{a, "1", "0"}][2]; g != itoa(n*2000*360) {
			t.Errorf("account %s array bytes: got %s want %d", a, g, n*2000*360)
		}
		// new Object() is 16 bytes (12-byte header aligned to 8).
		if g := got[key{a, "2", "0"}][2]; g != itoa(n*20000*16) {
			t.Errorf("account %s object bytes: got %s want %d", a, g, n*20000*16)
		}
	}
	if g := got[key{"0", "3", "0"}]; g[0] != "1" || g[1] != "2" {
		t.Errorf("multi site reference arrays: got %v want 1 array, 2 elements", g)
	}
	if g := got[key{"0", "3", "1"}]; g[0] != "2" || g[1] != "6" {
		t.Errorf("multi site int arrays: got %v want 2 arrays, 6 elements", g)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestLivenessAfterFullGC(t *testing.T) {
	classes := build(t)
	dir := t.TempDir()
	out, err := exec.Command(need(t, "java"), "-cp", classes, "-Dheapledger.snapshot.dir="+dir,
		"-Dheapledger.liveness=all", "-Dheapledger.snapshot.gc=true", "heapledger.rt.SelfTest", "live").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	path := strings.SplitN(string(out), "\n", 2)[0]
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (output %s)", err, out)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, "\t")
		if f[0] == "alloc" {
			rows[f[2]] = f[4:]
		}
		if f[0] == "liveness" && f[1] != "all" {
			t.Errorf("liveness line %q", line)
		}
	}
	// columns: count elements bytes live live_bytes reclaimed reclaimed_bytes untracked generations survived
	obj, arr := rows["2"], rows["1"]
	if len(obj) != 10 || len(arr) != 10 {
		t.Fatalf("rows %v\n%s", rows, b)
	}
	if obj[0] != "1050" || obj[3] != "100" || obj[5] != "950" || obj[7] != "0" {
		t.Errorf("objects: want 1050 allocated, 100 live, 950 reclaimed: %v", obj)
	}
	if obj[4] != "1600" {
		t.Errorf("live bytes of 100 Objects: want 1600, got %s", obj[4])
	}
	if obj[8] != "2" {
		t.Errorf("the live objects were born in two GC epochs: generations %s", obj[8])
	}
	if arr[0] != "1000" || arr[3] != "100" || arr[5] != "900" || arr[4] != "5600" {
		t.Errorf("int[10]: want 1000 allocated, 100 live (5600 bytes), 900 reclaimed: %v", arr)
	}
	// Survived counts what was already tracked at the snapshot before: there is none.
	if obj[9] != "0" || arr[9] != "0" {
		t.Errorf("survived in the first snapshot: objects %s, arrays %s, want 0", obj[9], arr[9])
	}
}

// TestSparseSiteIDs: sites numbered from bases far apart, as jars rewritten apart number them,
// are counted exactly; among them bases whose pages meet in a thread's directory at every size
// it may grow to, which must count through the general table instead.
func TestSparseSiteIDs(t *testing.T) {
	classes := build(t)
	dir := t.TempDir()
	const maxDirectory = 1 << 14 // Acct.MAX_DIRECTORY
	bases := []int{1, 1 << 24, 1<<24 + 32*maxDirectory, 1<<24 + 64*maxDirectory + 16, 1<<30 + 1000, 1<<31 - 100}
	args := []string{"-cp", classes, "-Dheapledger.snapshot.dir=" + dir, "heapledger.rt.SelfTest", "sparse"}
	for _, b := range bases {
		args = append(args, strconv.Itoa(b))
	}
	if out, err := exec.Command(need(t, "java"), args...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "*.snapshot"))
	if len(snaps) != 1 {
		t.Fatalf("snapshots: %v", snaps)
	}
	data, err := os.ReadFile(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, "\t")
		if f[0] == "alloc" {
			got[f[1]+"/"+f[2]+"/"+f[3]] = f[4] + " " + f[5]
		}
		if f[0] == "dropped" && f[1] != "0" {
			t.Errorf("runtime dropped events: %s", line)
		}
	}
	want := map[string]string{}
	for _, b := range bases {
		for k := 0; k < 40; k++ {
			n := 2 * (k + 1) // two threads
			want[fmt.Sprintf("2/%d/0", b+k)] = fmt.Sprintf("%d 0", n)
			want[fmt.Sprintf("3/%d/0", b+k)] = fmt.Sprintf("%d %d", n, 3*n)
		}
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("account/site/part %s: got %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d rows, want %d", len(got), len(want))
	}
}
