// Command htmlreport measures how long heapledger's HTML report of a big snapshot takes to
// draw in headless Chromium: it generates a synthetic snapshot of -sites allocation sites (10,000
// by default) with liveness, writes its report with `heapledger html`, loads the report -runs
// times and prints the time from navigation start until the page has drawn everything (the
// page's own heapledgerReport.ready), with the machine's load average, for docs/profiles.md.
// bench/htmlreport/run.sh runs it; it is not part of `make test`.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/heapledger/heapledger/internal/chromium"
	"github.com/heapledger/heapledger/internal/loadavg"
)

func main() {
	sites := flag.Int("sites", 10000, "allocation sites in the synthetic snapshot")
	accounts := flag.Int("accounts", 8, "memory accounts")
	runs := flag.Int("runs", 5, "loads of the report to time")
	bin := flag.String("bin", "bin/heapledger", "the heapledger binary")
	keep := flag.String("keep", "", "write the snapshot and the report into this directory and keep them")
	flag.Parse()
	if err := run(*sites, *accounts, *runs, *bin, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "htmlreport:", err)
		os.Exit(1)
	}
}

func run(sites, accounts, runs int, bin, keep string) error {
	dir := keep
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "heapledger-htmlbench-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	snap := filepath.Join(dir, "synthetic.snapshot")
	if err := writeSnapshot(snap, sites, accounts); err != nil {
		return err
	}
	report := filepath.Join(dir, "report.html")
	began := time.Now()
	if out, err := exec.Command(bin, "html", "-o", report, snap).CombinedOutput(); err != nil {
		return fmt.Errorf("%s html: %v\n%s", bin, err, out)
	}
	written := time.Since(began)
	st, err := os.Stat(report)
	if err != nil {
		return err
	}
	fmt.Printf("snapshot: %d sites in %d accounts; heapledger html wrote %.1f MB in %.2f s\n", sites, accounts, float64(st.Size())/1e6, written.Seconds())
	b, err := chromium.Start(chromium.Options{Width: 1400, Height: 1000})
	if err != nil {
		return err
	}
	defer b.Close()
	abs, _ := filepath.Abs(report)
	load0 := loadavg.Read()
	var times, zooms []float64
	for i := 0; i < runs; i++ {
		b.Logs()
		if err := b.Open("file://" + abs); err != nil {
			return err
		}
		if err := b.Wait("var r = window.heapledgerReport; return !!(r && (r.ready || r.error))", 2*time.Minute); err != nil {
			return err
		}
		var m struct {
			Ready  float64
			Error  *string
			Frames int
			Nodes  int
		}
		if err := b.Eval(&m, `var r = window.heapledgerReport, n = 0;
			(function walk(x) { n++; (x.c || []).forEach(walk); })(r.data.profile.flame);
			return {ready: r.ready, error: r.error, nodes: n,
				frames: document.querySelectorAll(".flame-chart g").length};`); err != nil {
			return err
		}
		if m.Error != nil {
			return fmt.Errorf("the report failed: %s", *m.Error)
		}
		if logs, _ := b.Logs(); len(logs) > 0 {
			return fmt.Errorf("console: %v", logs)
		}
		times = append(times, m.Ready)
		// Zooming into the widest account draws the frames that were too narrow at full width.
		var zoom struct {
			MS     float64
			Frames int
		}
		if err := b.Eval(&zoom, `var f = window.heapledgerReport.flames.alloc, el = f.element;
			var g = [...el.querySelectorAll("g")].find(g => g.__data__.depth === 1);
			var t0 = performance.now(); g.dispatchEvent(new MouseEvent("click", {bubbles: true}));
			return {ms: performance.now() - t0, frames: el.querySelectorAll("g").length};`); err != nil {
			return err
		}
		zooms = append(zooms, zoom.MS)
		fmt.Printf("load %d: drawn %.0f ms after navigation start (tree of %d frames, %d drawn in the two graphs); zoom into the widest account: %.0f ms, %d frames drawn\n",
			i+1, m.Ready, m.Nodes, m.Frames, zoom.MS, zoom.Frames)
	}
	slices.Sort(times)
	median := times[len(times)/2]
	verdict := "under"
	if median >= 2000 {
		verdict = "NOT under"
	}
	slices.Sort(zooms)
	fmt.Printf("median %.0f ms, min %.0f, max %.0f over %d loads: %s 2 s; zoom median %.0f ms\n", median, times[0], times[len(times)-1], runs, verdict, zooms[len(zooms)/2])
	fmt.Printf("load average (1, 5, 15 min) before: %s, after: %s; %s\n", load0, loadavg.Read(), cpuName())
	return nil
}

// writeSnapshot writes a snapshot (format 3, liveness all) of sites sites spread over accounts
// modules, each site in a method of its own (so that the flame graph has a frame per site, the
// hardest case), a tenth of each module's sites charged to another account (a shared library).
// Counts fall off with a site's rank as in real programs (Zipf, exponent 1: a few sites
// allocate most), ranks and object sizes drawn from a fixed seed.
func writeSnapshot(path string, sites, accounts int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# heapledger snapshot 3\nreason\texit\nprogram\tbench.Synthetic\npid\t1\ntime\t2026-01-01T00:00:00.000Z\n"+
		"uptime_ms\t60000\nthreads\t8\ndropped\t0\nliveness\tall\ngc_before\ttrue\n")
	for a := 1; a <= accounts; a++ {
		fmt.Fprintf(w, "account\t%d\tcom.bench.m%d.*\n", a, a)
	}
	types := []struct{ kind, name string }{{"object", "java.lang.String"}, {"array", "byte[]"}, {"object", "java.util.HashMap$Node"},
		{"array", "char[]"}, {"object", "com.bench.Value"}, {"array", "java.lang.Object[]"}, {"object", "java.util.ArrayList"}}
	rng := rand.New(rand.NewPCG(34, 10000))
	rank := rng.Perm(sites)
	var rows strings.Builder
	for i := 1; i <= sites; i++ {
		module := 1 + i%accounts
		class := fmt.Sprintf("com.bench.m%d.C%d", module, (i/accounts)%50)
		method := fmt.Sprintf("%s.work%d(Ljava/lang/String;I)V", class, i/accounts/50)
		t := types[i%len(types)]
		fmt.Fprintf(w, "site\t%d\t%s\t%s\t%s\t%d\t%d\n", i, t.kind, t.name, method, 4*(i%300), 10+i%400)
		account := module
		if i%10 == 0 {
			account = 1 + (module+1)%accounts
		}
		count := 1 + int64(5e6/float64(rank[i-1]+1))
		size := int64(16 + 8*rng.IntN(64))
		elements := int64(0)
		if t.kind == "array" {
			elements = count * (size - 16)
		}
		live := count / int64(2+i%5)
		fmt.Fprintf(&rows, "alloc\t%d\t%d\t0\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t0\t1\t%d\n", account, i, count, elements, count*size,
			live, live*size, count-live, (count-live)*size, live)
	}
	w.WriteString(rows.String())
	w.WriteString("end\n")
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	n, name := 0, ""
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			switch strings.TrimSpace(k) {
			case "processor":
				n++
			case "model name":
				name = strings.TrimSpace(v)
			}
		}
	}
	return fmt.Sprintf("%d × %s", n, name)
}
