package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/ddmin"
	"github.com/heapledger/heapledger/analysis/heapdump"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/fixtures/heapdumps"
)

// sitesFixture is a program in three accounts whose live objects the test knows by class alone:
//   - hsfix.alpha allocates a holder (Item[]), its items and each item's byte[] payload;
//   - hsfix.gamma allocates tags, each with an int[], that alpha's items hold, ten items a tag
//     (so no item alone holds one: they are in alpha's figure through the holder only);
//   - hsfix.beta allocates a singly linked chain of nodes, each with a long[].
//
// Sizes come from a generator that repeats with no period of 8, so that sampling every 8th
// allocation sees a fair sample of them. Main, unaccounted, drops some garbage, then asks the
// runtime for a snapshot on demand, which with heapledger.snapshot.heapdump=true writes the dump;
// given a third argument, it dumps its heap to that file itself instead.
var sitesFixture = map[string]string{
	"hsfix/Main.java": `package hsfix;

public class Main {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        hsfix.alpha.Store.fill(n, Integer.parseInt(args[1]));
        hsfix.beta.Chain.build(n / 20);
        hsfix.alpha.Store.scratch(n / 10);
        if (args.length > 2) {
            // A dump the program takes itself, as jmap would: the runtime has no part in it.
            ((com.sun.management.HotSpotDiagnosticMXBean) java.lang.management.ManagementFactory
                    .getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)).dumpHeap(args[2], true);
        } else {
            Class.forName("heapledger.rt.Ledger").getMethod("snapshot", String.class).invoke(null, "demand");
        }
        System.out.println(hsfix.alpha.Store.size() + " " + hsfix.beta.Chain.length());
    }
}
`,
	"hsfix/alpha/Item.java": `package hsfix.alpha;

public final class Item {
    final byte[] payload;
    Object tag;

    Item(byte[] payload) { this.payload = payload; }
}
`,
	"hsfix/alpha/Store.java": `package hsfix.alpha;

public final class Store {
    static Item[] items;
    private static long seed = 12345;

    static int next(int bound) {
        seed = seed * 6364136223846793005L + 1442695040888963407L;
        return (int) ((seed >>> 33) % bound);
    }

    public static void fill(int n, int payload) {
        items = new Item[n];
        Object tag = null;
        for (int i = 0; i < n; i++) {
            if (i % 10 == 0) tag = hsfix.gamma.Tag.make(next(60));
            Item it = new Item(new byte[16 + next(payload)]);
            it.tag = tag;
            items[i] = it;
        }
    }

    /** Garbage: allocated by alpha and dropped, so in no live figure. */
    public static int scratch(int n) {
        int sum = 0;
        for (int i = 0; i < n; i++) sum += new Item(new byte[8]).payload.length;
        return sum;
    }

    public static int size() { return items.length; }
}
`,
	"hsfix/gamma/Tag.java": `package hsfix.gamma;

public final class Tag {
    final int[] data;

    private Tag(int[] data) { this.data = data; }

    public static Tag make(int k) { return new Tag(new int[1 + k]); }
}
`,
	"hsfix/beta/Chain.java": `package hsfix.beta;

public final class Chain {
    static Node head;
    private static long seed = 777;

    static final class Node {
        final Node next;
        final long[] data;

        Node(Node next, long[] data) { this.next = next; this.data = data; }
    }

    public static void build(int n) {
        for (int i = 0; i < n; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            head = new Node(head, new long[1 + (int) ((seed >>> 33) % 30)]);
        }
    }

    public static int length() {
        int k = 0;
        for (Node x = head; x != null; x = x.next) k++;
        return k;
    }
}
`,
}

const sitesAccounts = "hsfix.alpha,hsfix.beta,hsfix.gamma"

// sitesDump compiles the fixture, rewrites it with the count pass and liveness all, runs it with
// n items, whose payloads are 16 bytes and up to payload more, under the given extra JVM options
// and returns the heap dump the runtime wrote.
func sitesDump(t *testing.T, n, payload int, jvm ...string) string {
	t.Helper()
	dump, _ := runSitesFixture(t, n, payload, false, jvm...)
	return dump
}

// sitesRun is where runSitesFixture left what the run wrote besides the dump.
type sitesRun struct {
	table string // the rewrite's table
	snaps string // the runtime's snapshot directory
}

// runSitesFixture is sitesDump; with self, the program dumps its heap itself, as a user with jmap
// would, and the runtime holds no table in it.
func runSitesFixture(t *testing.T, n, payload int, self bool, jvm ...string) (string, sitesRun) {
	t.Helper()
	needJDK(t)
	dir := t.TempDir()
	src, classes, out, snaps := filepath.Join(dir, "src"), filepath.Join(dir, "classes"), filepath.Join(dir, "rw"), filepath.Join(dir, "snaps")
	var files []string
	for name, text := range sitesFixture {
		p := filepath.Join(src, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	if b, err := exec.Command("javac", append([]string{"--release", "8", "-d", classes}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	if _, stderr, err := runCLI(t, "rewrite", "--pass", "count", "--accounts", sitesAccounts, "--liveness", "all", classes, "-o", out+"/"); err != nil {
		t.Fatalf("rewrite: %v\n%s", err, stderr)
	}
	args := append([]string{"-Dheapledger.snapshot.dir=" + snaps, "-Dheapledger.snapshot.heapdump=true"}, jvm...)
	args = append(args, "-cp", out+string(os.PathListSeparator)+os.Getenv("HEAPLEDGER_RUNTIME"), "hsfix.Main", fmt.Sprint(n), fmt.Sprint(payload))
	if self {
		args = append(args, filepath.Join(snaps, "self.hprof"))
		os.MkdirAll(snaps, 0o755)
	}
	stdout, stderr, err := runGuarded(t, 3*time.Minute, "java", args...)
	if err != nil || strings.TrimSpace(stdout) != fmt.Sprintf("%d %d", n, n/20) {
		t.Fatalf("fixture: %v\nstdout: %s\nstderr: %s", err, stdout, stderr)
	}
	dumps, _ := filepath.Glob(filepath.Join(snaps, "*.hprof"))
	if len(dumps) != 1 {
		t.Fatalf("want one heap dump, found %v (stderr: %s)", dumps, stderr)
	}
	return dumps[0], sitesRun{table: out + ".table.tsv", snaps: snaps}
}

// slowHeap answers, for a dump, what a set of objects retains by reachability alone, with no
// dominator tree (ddmin.SlowUnionRetained). It follows strong references only, as retained sizes
// do, and no reference into heapledger's objects, which the analysis sets apart.
type slowHeap struct {
	d    *heapdump.Dump
	skip heapgraph.EdgeSet
}

func newSlowHeap(t *testing.T, path string) *slowHeap {
	t.Helper()
	d, err := heapdump.Load(path, heapdump.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := d.Graph
	// heapledger's objects: the instances, arrays and class objects of its runtime's classes.
	own := make([]bool, g.N())
	for v := range own {
		name := d.ClassName(uint32(v))
		if k := d.ClassOfClassObject(uint32(v)); k >= 0 {
			name = d.Classes[k].Name
		}
		own[v] = strings.HasPrefix(name, "heapledger.")
	}
	skip := heapgraph.NewEdgeSet(len(g.Succ))
	for e, w := range g.Succ {
		if d.IsWeak(uint32(e)) || own[w] {
			skip.Add(uint32(e))
		}
	}
	return &slowHeap{d: d, skip: skip}
}

// union is the size of the union of the members' retained sets, and how many are live.
func (h *slowHeap) union(members []uint32) (uint64, int) {
	return ddmin.SlowUnionRetained(h.d.Graph, h.skip, members)
}

// ofClass lists the nodes of a class, and with elem, instead, the nodes of class elem that they
// refer to (an item's payload).
func (h *slowHeap) ofClass(class, elem string) []uint32 {
	var out []uint32
	for v := uint32(1); v < uint32(h.d.Graph.N()); v++ {
		if h.d.ClassName(v) != class || h.d.ClassOfClassObject(v) >= 0 {
			continue
		}
		if elem == "" {
			out = append(out, v)
			continue
		}
		for _, w := range h.d.Graph.Successors(v) {
			if h.d.ClassName(w) == elem {
				out = append(out, w)
			}
		}
	}
	return out
}

// fixtureTruth is, per account and for two sites, the fixture's objects as the test knows them
// by class, with the union of their retained sets by slowHeap.
func fixtureTruth(t *testing.T, h *slowHeap) map[string][]uint32 {
	t.Helper()
	alpha := slices.Concat(h.ofClass("hsfix.alpha.Item[]", ""), h.ofClass("hsfix.alpha.Item", ""), h.ofClass("hsfix.alpha.Item", "byte[]"))
	gamma := slices.Concat(h.ofClass("hsfix.gamma.Tag", ""), h.ofClass("hsfix.gamma.Tag", "int[]"))
	beta := slices.Concat(h.ofClass("hsfix.beta.Chain$Node", ""), h.ofClass("hsfix.beta.Chain$Node", "long[]"))
	return map[string][]uint32{
		"hsfix.alpha": alpha, "hsfix.gamma": gamma, "hsfix.beta": beta,
		"byte[] site": h.ofClass("hsfix.alpha.Item", "byte[]"), "Tag site": h.ofClass("hsfix.gamma.Tag", ""),
	}
}

// siteRow finds the row of the site in method that allocates typ.
func siteRow(t *testing.T, rows []groupView, method, typ string) groupView {
	t.Helper()
	for _, r := range rows {
		if strings.HasPrefix(r.Site, method+" ") && strings.HasSuffix(r.Site, " "+typ) {
			return r
		}
	}
	t.Fatalf("no site of %s in %s among %+v", typ, method, rows)
	return groupView{}
}

// TestHeapAnalyzeRetainedPerAccount: a dump the runtime wrote of the fixture run with liveness
// all gives, per account and per site, exactly the union of the retained sets of the objects the
// fixture knows the account (the site) allocated, as reachability alone finds them; names come
// from the table the runtime held in the dump; the suspect's accumulation point says which
// accounts and sites made what it holds.
func TestHeapAnalyzeRetainedPerAccount(t *testing.T) {
	const n = 12000
	dump := sitesDump(t, n, 900)
	var v analysisView
	cliJSON(t, &v, "heap", "analyze", "--json", dump)
	hv := v.Heapledger
	if hv == nil || hv.Liveness != "all" || hv.Estimates || len(hv.NamesFrom) != 1 || !strings.Contains(hv.NamesFrom[0], "in the dump") {
		t.Fatalf("heapledger section %+v", hv)
	}
	h := newSlowHeap(t, dump)
	truth := fixtureTruth(t, h)
	accounts := map[string]groupView{}
	for _, r := range hv.Accounts {
		accounts[r.Account] = r
	}
	for _, name := range []string{"hsfix.alpha", "hsfix.gamma", "hsfix.beta"} {
		want, live := h.union(truth[name])
		got := accounts[name]
		if got.Retained != want || got.Objects != uint64(live) || got.Tracked != uint64(live) {
			t.Errorf("account %s: retained %d, %d objects; the slow union of its %d objects' retained sets is %d", name, got.Retained, got.Objects, live, want)
		}
	}
	for key, site := range map[string][2]string{"byte[] site": {"hsfix.alpha.Store.fill(II)V", "byte[]"}, "Tag site": {"hsfix.gamma.Tag.make(I)Lhsfix/gamma/Tag;", "hsfix.gamma.Tag"}} {
		want, live := h.union(truth[key])
		if got := siteRow(t, hv.Sites, site[0], site[1]); got.Retained != want || got.Objects != uint64(live) {
			t.Errorf("site %s: retained %d, %d objects; want %d, %d", got.Site, got.Retained, got.Objects, want, live)
		}
	}
	// What alpha's holder keeps is the heap's biggest: the suspect accumulates in it, and says
	// that alpha and gamma made what it holds, alpha all of it.
	if len(v.Suspects) == 0 || v.Suspects[0].AllocatedBy == nil {
		t.Fatalf("suspects %+v", v.Suspects)
	}
	s := v.Suspects[0]
	if s.Accumulation.Class != "hsfix.alpha.Item[]" {
		t.Fatalf("accumulation point %s, want alpha's Item[]", s.Accumulation.Object)
	}
	held := map[string]uint64{}
	for _, a := range s.AllocatedBy.Accounts {
		held[a.Account] = a.Retained
	}
	alpha, _ := h.union(truth["hsfix.alpha"])
	gamma, _ := h.union(truth["hsfix.gamma"])
	if len(held) != 2 || held["hsfix.alpha"] != alpha || held["hsfix.gamma"] != gamma || s.Accumulation.Retained != alpha {
		t.Errorf("the accumulation point (retaining %d) holds %v; want alpha's %d and gamma's %d", s.Accumulation.Retained, held, alpha, gamma)
	}
	if len(s.AllocatedBy.Sites) < 4 || s.AllocatedBy.Sites[0].Account != "hsfix.alpha" {
		t.Errorf("sites below the accumulation point: %+v", s.AllocatedBy.Sites)
	}
	text, _, err := runCLI(t, "heap", "analyze", dump)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"what it holds was allocated by", "account hsfix.alpha: ", "retained size by memory account (exact",
		"retained size by allocation site", "hsfix.alpha.Store.fill(II)V line", "left out of every figure as its own"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
}

// TestHeapAnalyzeRetainedPerAccountSampled: the same fixture with liveness sample:8 (every 8th
// allocation of each site tracked). What a sample estimates is the union of the retained sets of
// the objects an account allocated at sites that allocated 8 or more, the only ones sampling can
// see: alpha's holder, made once, is never tracked, nor what only it holds. Each account's
// estimate is within its stated error (two standard errors) of that union over all those
// objects, tracked or not, as reachability alone finds it; the error is a useful one, under a
// quarter of the figure; and at least, what the tracked objects alone retain, is no more than it.
func TestHeapAnalyzeRetainedPerAccountSampled(t *testing.T) {
	const n = 12000
	dump := sitesDump(t, n, 900, "-Dheapledger.liveness=sample:8")
	var v analysisView
	cliJSON(t, &v, "heap", "analyze", "--json", dump)
	hv := v.Heapledger
	if hv == nil || hv.Liveness != "sample:8" || !hv.Estimates || hv.Rate != 8 {
		t.Fatalf("heapledger section %+v", hv)
	}
	h := newSlowHeap(t, dump)
	truth := fixtureTruth(t, h)
	holder := h.ofClass("hsfix.alpha.Item[]", "")
	truth["hsfix.alpha"] = slices.DeleteFunc(truth["hsfix.alpha"], func(v uint32) bool { return slices.Contains(holder, v) })
	for _, r := range hv.Accounts {
		want, live := h.union(truth[r.Account])
		off := math.Abs(float64(r.Retained) - float64(want))
		t.Logf("%s: estimate %d ± %d, at least %d; truth %d (%d objects, %d tracked)", r.Account, r.Retained, r.Error, r.AtLeast, want, live, r.Tracked)
		if off > float64(r.Error) || r.Error == 0 || float64(r.Error) > 0.25*float64(want) || r.AtLeast > want {
			t.Errorf("account %s: estimate %d ± %d (at least %d); the slow union over all %d of its objects is %d", r.Account, r.Retained, r.Error, r.AtLeast, live, want)
		}
		if r.Tracked == 0 || r.Tracked > uint64(live)/8+1 {
			t.Errorf("account %s: %d tracked of %d live objects, sampling every 8th", r.Account, r.Tracked, live)
		}
	}
	if len(hv.Accounts) != 3 {
		t.Errorf("accounts %+v, want alpha, beta and gamma", hv.Accounts)
	}
	text, _, err := runCLI(t, "heap", "analyze", dump)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "estimated from every 8th allocation of each site") || !strings.Contains(text, " ± ") {
		t.Errorf("the text report does not mark the figures as estimates:\n%s", text)
	}
}

// TestHeapAnalyzeSetsHeapledgerApart: a dump of a run with liveness all that tracks a million
// small objects is mostly heapledger's tracking references, which link into one strongly
// connected component through their lists; they used to be the dump's top suspect. Set apart,
// they are counted and left out: the suspect is the application's holder, and no ranking, class
// or component of the report is heapledger's.
func TestHeapAnalyzeSetsHeapledgerApart(t *testing.T) {
	const n = 460000 // items, payloads, and a tenth as many tags and their arrays: 1.01 million tracked
	dump := sitesDump(t, n, 1)
	var v analysisView
	cliJSON(t, &v, "heap", "analyze", "--json", "--top", "10", dump)
	hv := v.Heapledger
	if hv == nil || hv.TrackingReferences < 1_000_000 || hv.RuntimeObjects < uint64(hv.TrackingReferences) {
		t.Fatalf("heapledger section %+v, want a million tracking references set apart", hv)
	}
	if hv.TrackingBytes < v.Bytes {
		t.Errorf("the tracking references take %d bytes, the application %d: the fixture should be mostly heapledger's", hv.TrackingBytes, v.Bytes)
	}
	own := func(what, class string) {
		if strings.HasPrefix(class, "heapledger.") || strings.HasPrefix(class, "class heapledger.") {
			t.Errorf("%s is heapledger's: %s", what, class)
		}
	}
	if len(v.Suspects) == 0 || v.Suspects[0].Accumulation.Class != "hsfix.alpha.Item[]" {
		t.Fatalf("suspects %+v, want the application's holder as the accumulation point", v.Suspects)
	}
	for _, s := range v.Suspects {
		own("a suspect", s.Object)
		own("an accumulation point", s.Accumulation.Object)
	}
	for _, o := range v.TopRetained {
		own("an object of the top retained", o.Object)
	}
	for _, c := range v.TopDynamic {
		own("an object of the top dynamic", c.Object)
	}
	for _, c := range v.ByClass {
		own("a class of the retained by class", c.Class)
	}
	if v.Graph.LargestComp >= 1_000_000 {
		t.Errorf("the largest strongly connected component has %d objects: the tracking lists are still in the graph", v.Graph.LargestComp)
	}
	if acc := v.Suspects[0].AllocatedBy; acc == nil || len(acc.Accounts) == 0 || acc.Accounts[0].Account != "hsfix.alpha" || acc.Accounts[0].Objects != 2*n+1 {
		t.Errorf("the holder's objects were allocated by %+v, want alpha's first: itself, %d items and their payloads", acc, n)
	}
}

// TestHeapAnalyzeNamesFromTableOrSnapshot: a dump the program took itself holds no table: the
// report names accounts and sites by ID and says how to name them; --table names them from the
// rewrite's table, --snapshot from a snapshot of the same run; a table that is not one is refused
// before the dump is read, and names given for a dump without heapledger's runtime are said to
// name nothing.
func TestHeapAnalyzeNamesFromTableOrSnapshot(t *testing.T) {
	dump, run := runSitesFixture(t, 2000, 100, true)
	var plain analysisView
	cliJSON(t, &plain, "heap", "analyze", "--json", dump)
	hv := plain.Heapledger
	if hv == nil || len(hv.NamesFrom) != 0 || len(hv.Accounts) != 3 || hv.Accounts[0].Account != "account-1" || !strings.HasPrefix(hv.Sites[0].Site, "site#") {
		t.Fatalf("without a table: %+v", hv)
	}
	text, _, err := runCLI(t, "heap", "analyze", dump)
	if err != nil || !strings.Contains(text, "names of accounts and sites: none") || !strings.Contains(text, "--table or --snapshot names them") {
		t.Errorf("the text report does not say the names are missing (%v):\n%s", err, text)
	}
	snaps, _ := filepath.Glob(filepath.Join(run.snaps, "*.snapshot"))
	if len(snaps) == 0 {
		t.Fatalf("the run wrote no snapshot in %s", run.snaps)
	}
	for flag, file := range map[string]string{"--table": run.table, "--snapshot": snaps[0]} {
		var v analysisView
		cliJSON(t, &v, "heap", "analyze", "--json", flag, file, dump)
		if h := v.Heapledger; h == nil || !slices.Equal(h.NamesFrom, []string{file}) || h.Accounts[0].Account != "hsfix.alpha" ||
			h.Accounts[0].Retained != hv.Accounts[0].Retained || !strings.HasPrefix(h.Sites[0].Site, "hsfix.alpha.Store.fill(II)V line") {
			t.Errorf("%s %s: %+v", flag, file, h)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.tsv")
	os.WriteFile(bad, []byte("not a table\n"), 0o644)
	if _, _, err := runCLI(t, "heap", "analyze", "--table", bad, dump); err == nil || !strings.Contains(err.Error(), "--table: "+bad) {
		t.Errorf("a bad table: %v", err)
	}
	_, stderr, err := runCLI(t, "heap", "analyze", "--table", run.table, "--top", "1", heapdumps.Dump(t))
	if err != nil || !strings.Contains(stderr, "holds no heapledger runtime") {
		t.Errorf("a table for a dump without heapledger: %v\n%s", err, stderr)
	}
}
