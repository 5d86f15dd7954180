package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minMax(xs []float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// geomean of positive values; ratios are multiplicative, so this is the mean that treats a 2×
// slowdown and a 2× speedup symmetrically.
func geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}

// pairRatios returns the per-pair wall-time, CPU-time and RSS ratios of a mode to the plain run
// before it.
func pairRatios(ps []Pair) (wall, cpu, rss []float64) {
	for _, p := range ps {
		wall = append(wall, p.Mode.Wall.Seconds()/p.Plain.Wall.Seconds())
		if p.Plain.CPU > 0 {
			cpu = append(cpu, p.Mode.CPU.Seconds()/p.Plain.CPU.Seconds())
		}
		if p.Plain.RSSKiB > 0 {
			rss = append(rss, float64(p.Mode.RSSKiB)/float64(p.Plain.RSSKiB))
		}
	}
	return wall, cpu, rss
}

func spread(xs []float64, format string) string {
	if len(xs) == 0 {
		return "–"
	}
	m := fmt.Sprintf(format, median(xs))
	if len(xs) == 1 {
		return m
	}
	lo, hi := minMax(xs)
	return fmt.Sprintf("%s ("+format+"–"+format+")", m, lo, hi)
}

// Report holds everything the doc says about one suite run.
type Report struct {
	Machine     Machine
	Command     string
	Note        string
	Options     Options
	Modes       []*Mode
	Skipped     map[string]string // mode → why it was not run
	Results     []*Result
	Measured    int  // measured rounds completed so far
	Interrupted bool // the run was stopped in the middle of a round; its runs so far are included
	// Running is set while rounds remain: the doc written after each round says the run goes on
	// rather than that it stopped.
	Running bool
	// Stop says why the run ended before all its rounds (stopMaxTime, stopInterrupted), or "".
	Stop     stopReason
	Duration string
}

func (rep *Report) anyPairs() bool {
	for _, r := range rep.Results {
		for _, p := range r.Pairs {
			if len(p) > 0 {
				return true
			}
		}
	}
	return false
}

// summaryRows gives, per non-plain mode, the geometric mean over workloads of the median time
// and RSS ratios; workloads where the mode failed are left out and counted.
func (rep *Report) summaryRows() []string {
	var rows []string
	for _, m := range rep.Modes[1:] {
		var t, c, r []float64
		failed := 0
		for _, res := range rep.Results {
			if res.Failed[m.Name] != "" || res.Failed["plain"] != "" {
				failed++
				continue
			}
			tr, cr, rr := pairRatios(res.Pairs[m.Name])
			if len(tr) > 0 {
				t = append(t, median(tr))
			}
			if len(cr) > 0 {
				c = append(c, median(cr))
			}
			if len(rr) > 0 {
				r = append(r, median(rr))
			}
		}
		fail := ""
		if failed > 0 {
			fail = fmt.Sprintf("**%d failed**", failed)
		} else {
			fail = "all identical"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %d | %s |", m.Name, fmtRatio(geomean(t)), fmtRatio(geomean(c)), fmtRatio(geomean(r)), len(t), fail))
	}
	return rows
}

func fmtRatio(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.2f×", x)
}

func (rep *Report) workloadRows() []string {
	var rows []string
	for _, res := range rep.Results {
		var pt, pc, prss []float64
		for _, s := range res.Plain {
			pt = append(pt, s.Wall.Seconds())
			pc = append(pc, s.CPU.Seconds())
			prss = append(prss, float64(s.RSSKiB)/1024)
		}
		out := "reference"
		if res.Ref != nil {
			out = "reference `" + res.Ref.Digest()[:12] + "`"
		}
		if f := res.Failed["plain"]; f != "" {
			out = "**FAILED**: " + firstLine(f)
		}
		rows = append(rows, fmt.Sprintf("| %s | plain | %s | 1 | %s | 1 | %s | 1 | %s | |", res.W.Name, spread(pt, "%.2f"), spread(pc, "%.2f"), spread(prss, "%.0f"), out))
		for _, m := range res.Modes[1:] {
			var mt, mc, mrss []float64
			for _, p := range res.Pairs[m.Name] {
				mt = append(mt, p.Mode.Wall.Seconds())
				mc = append(mc, p.Mode.CPU.Seconds())
				mrss = append(mrss, float64(p.Mode.RSSKiB)/1024)
			}
			tr, cr, rr := pairRatios(res.Pairs[m.Name])
			out := "identical"
			if len(res.Pairs[m.Name]) == 0 {
				out = "not run"
			}
			if res.Failed["plain"] != "" {
				out = "not run: plain failed"
			}
			if f := res.Failed[m.Name]; f != "" {
				out = "**FAILED**: " + firstLine(f)
			}
			prep := ""
			if l := res.Launches[m.Name]; l != nil {
				prep = l.Prep
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", res.W.Name, m.Name,
				spread(mt, "%.2f"), spread(tr, "%.2f"), spread(mc, "%.2f"), spread(cr, "%.2f"), spread(mrss, "%.0f"), spread(rr, "%.2f"), out, prep))
		}
	}
	return rows
}

func firstLine(s string) string {
	s = strings.SplitN(s, "\n", 2)[0]
	s = strings.ReplaceAll(s, "|", "\\|")
	return clip(s)
}

// Failures lists every failed (workload, mode) with the full message.
func (rep *Report) Failures() []string {
	var out []string
	for _, res := range rep.Results {
		for _, m := range res.Modes {
			if f := res.Failed[m.Name]; f != "" {
				out = append(out, fmt.Sprintf("%s / %s: %s", res.W.Name, m.Name, f))
			}
		}
	}
	return out
}

// Tables is the part of the report also printed on the terminal.
func (rep *Report) Tables() string {
	var b strings.Builder
	b.WriteString("| mode | wall time ÷ plain (geomean) | CPU time ÷ plain (geomean) | peak RSS ÷ plain (geomean) | workloads | output |\n|---|---|---|---|---|---|\n")
	for _, r := range rep.summaryRows() {
		b.WriteString(r + "\n")
	}
	b.WriteString("\n| workload | mode | wall s, median (min–max) | wall ÷ plain, median (min–max) | CPU s, median (min–max) | CPU ÷ plain, median (min–max) | peak RSS MiB, median (min–max) | RSS ÷ plain, median (min–max) | output | one-off preparation |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.workloadRows() {
		b.WriteString(r + "\n")
	}
	if rows := rep.startupRows(); len(rows) > 0 {
		b.WriteString("\nStart-up: plain, offline-rewritten (heapledger-count) and under the agent. First output is the time from the start of the workload's first JVM to the first line it wrote on standard output or standard error, leaving out heapledger's and the JVM's own notes (– when the program writes only files); the transform columns are the agent's own figures at exit (`--stats`: classes sent to the transform service, latency per class from request to answer, median and 99th percentile within the run), median over runs.\n\n")
		b.WriteString("| workload | mode | first output ms, median (min–max) | first output ÷ plain, median (min–max) | classes sent | transform median ms | transform p99 ms, median (min–max) |\n|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			b.WriteString(r + "\n")
		}
	}
	return b.String()
}

// startupMode says whether a mode belongs in the start-up table: the offline count row and the
// agent rows, which the issue compares with plain.
func startupMode(m *Mode) bool {
	return m.Name == "heapledger-count" || strings.HasPrefix(m.Name, "heapledger-agent")
}

// startupRows gives, per workload, plain's and each start-up mode's time to first output and,
// for agent modes, the agent's class count and transform latency. Runs that wrote nothing on
// standard output have no first output and are left out of its figures.
func (rep *Report) startupRows() []string {
	var rows []string
	any := false
	for _, m := range rep.Modes[1:] {
		any = any || startupMode(m)
	}
	if !any {
		return nil
	}
	ms := func(xs []time.Duration) []float64 {
		var out []float64
		for _, x := range xs {
			if x > 0 {
				out = append(out, float64(x)/float64(time.Millisecond))
			}
		}
		return out
	}
	for _, res := range rep.Results {
		if res.Failed["plain"] != "" {
			continue
		}
		var pf []time.Duration
		for _, s := range res.Plain {
			pf = append(pf, s.First)
		}
		rows = append(rows, fmt.Sprintf("| %s | plain | %s | 1 | | | |", res.W.Name, spread(ms(pf), "%.0f")))
		for _, m := range res.Modes[1:] {
			if !startupMode(m) {
				continue
			}
			if f := res.Failed[m.Name]; f != "" {
				rows = append(rows, fmt.Sprintf("| %s | %s | **FAILED** | | | | |", res.W.Name, m.Name))
				continue
			}
			var mf []time.Duration
			var ratio, classes, med, p99 []float64
			for _, p := range res.Pairs[m.Name] {
				mf = append(mf, p.Mode.First)
				if p.Mode.First > 0 && p.Plain.First > 0 {
					ratio = append(ratio, p.Mode.First.Seconds()/p.Plain.First.Seconds())
				}
				if a := p.Mode.Agent; a != nil {
					classes = append(classes, float64(a.Classes))
					med = append(med, a.MedianMs)
					p99 = append(p99, a.P99Ms)
				}
			}
			cls, medS, p99S := "", "", ""
			if strings.HasPrefix(m.Name, "heapledger-agent") {
				cls, medS, p99S = "–", "–", "–"
				if len(classes) > 0 {
					cls = fmt.Sprintf("%.0f", median(classes))
					medS = fmt.Sprintf("%.2f", median(med))
					p99S = spread(p99, "%.1f")
				}
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s |", res.W.Name, m.Name, spread(ms(mf), "%.0f"), spread(ratio, "%.2f"), cls, medS, p99S))
		}
	}
	return rows
}

// Markdown renders docs/benchmarks.md.
func (rep *Report) Markdown() string {
	var b strings.Builder
	m := rep.Machine
	b.WriteString("# Benchmarks: real workloads, side by side\n\n")
	b.WriteString("<!-- Generated by bench/run.sh (bench/suite); edit the generator, not this file. -->\n\n")
	b.WriteString("Every number below comes from one run of the command at the bottom, which regenerates this file. ")
	b.WriteString("Each workload is a real program from a Debian package (plus one of ours) on generated, deterministic input. ")
	b.WriteString("Every run of every mode must produce the same output as plain, or the suite fails whatever the speed.\n\n")
	if rep.Note != "" {
		b.WriteString("> **Note.** " + rep.Note + "\n\n")
	}
	b.WriteString("## Summary\n\n")
	b.WriteString(rep.Tables())
	if f := rep.Failures(); len(f) > 0 {
		b.WriteString("\n## Failures\n\n")
		for _, x := range f {
			b.WriteString("- " + strings.ReplaceAll(x, "\n", "\n  ") + "\n")
		}
	}
	b.WriteString("\n## How it is measured\n\n")
	rounds := fmt.Sprintf("%d measured round(s)", rep.Measured)
	switch {
	case rep.Running:
		rounds = fmt.Sprintf("%d of %d measured round(s) so far (the run is still going and rewrites this file after every round)", rep.Measured, rep.Options.Runs)
	case rep.Stop == stopMaxTime:
		rounds = fmt.Sprintf("%d complete measured round(s) (%d were asked for; -max-time %s stopped the run before another round)", rep.Measured, rep.Options.Runs, rep.Options.MaxTime)
	case rep.Measured < rep.Options.Runs:
		rounds = fmt.Sprintf("%d complete measured round(s) (%d were asked for; the run was interrupted)", rep.Measured, rep.Options.Runs)
	}
	if rep.Interrupted {
		rounds += "; the run was interrupted, and the runs of the unfinished round are included"
	}
	if rep.Options.Unpaired {
		rounds += "; correctness run (-quick): one plain run per workload shared by all modes"
	}
	fmt.Fprintf(&b, "- %d warm-up round(s), discarded, then %s. A measured round runs every workload once in every mode, modes alternating with plain (plain, A, plain, B, …), so drift in machine load hits plain and the mode alike; a warm-up round runs each mode once, unpaired.\n", rep.Options.Warmup, rounds)
	b.WriteString("- Each run is a fresh JVM (DaCapo-style warm-up happens inside it and is part of what users feel); wall time is from process start to exit, summed over the workload's JVM invocations; CPU time is the JVM's user + system time (all threads, including JIT and GC), which shows the work a mode adds even when other load on the machine stretches wall time; peak RSS is the kernel's `ru_maxrss` of the JVM process (largest over invocations).\n")
	b.WriteString("- A ratio is a mode's run divided by the plain run just before it; the table shows the median and min–max of those ratios. The summary is the geometric mean over workloads of the median ratios.\n")
	b.WriteString("- Output check: each workload's output is reduced to canonical lines (file digests, the program's own result lines; PDF dates, IDs and offsets blanked; PNGs compared by decoded pixels) and compared with the first plain run's, on every run of every mode, plain included. Workload-specific self-checks (sunflow's image check, class-file and document counts) run too.\n")
	b.WriteString("- One-off preparation (rewriting jars) happens before the first timed run and is cached per workload, flags and binary; it is shown in its own column and not in the timings.\n")
	b.WriteString("\n## Modes\n\n| mode | what runs |\n|---|---|\n")
	for _, md := range rep.Modes {
		fmt.Fprintf(&b, "| %s | %s |\n", md.Name, md.What)
	}
	for _, md := range modes {
		if why, ok := rep.Skipped[md.Name]; ok {
			fmt.Fprintf(&b, "| %s | **not run**: %s |\n", md.Name, strings.ReplaceAll(why, "\n", " "))
		}
	}
	b.WriteString("\n## Workloads\n\n| workload | program | input | code jars | accounts (heapledger-accounts) |\n|---|---|---|---|---|\n")
	for _, res := range rep.Results {
		var names []string
		for _, j := range res.P.Jars {
			names = append(names, shortJar(j))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d: `%s` |\n", res.W.Name, res.W.Program, res.P.Input, strings.Join(names, ", "),
			len(res.W.Accounts), strings.Join(res.W.Accounts, "`, `"))
	}
	b.WriteString("\n## Machine\n\n")
	fmt.Fprintf(&b, "- CPU: %s, %d logical cores\n- Memory: %.1f GiB\n- Kernel: Linux %s\n- JDK: %s\n- Date: %s; suite took %s\n- Load average (1, 5, 15 min): %s at start, %s at end\n",
		m.CPU, m.Cores, m.MemGiB, m.Kernel, m.JDK, m.Date, rep.Duration, m.LoadStart, m.LoadEnd)
	b.WriteString("\n## Command\n\n```\n" + rep.Command + "\n```\n")
	return b.String()
}

func shortJar(p string) string {
	if strings.HasPrefix(p, "/usr/share/java/") {
		return strings.TrimPrefix(p, "/usr/share/java/")
	}
	i := strings.LastIndex(p, "/")
	return p[i+1:]
}
