//go:build linux

package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// median of the samples' wall and CPU times, each taken on its own.
func median(s []Sample) Sample {
	walls := make([]time.Duration, len(s))
	cpus := make([]time.Duration, len(s))
	for i, x := range s {
		walls[i], cpus[i] = x.Wall, x.CPU
	}
	return Sample{Wall: medianOf(walls), CPU: medianOf(cpus)}
}

func medianOf(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	if len(d)%2 == 1 {
		return d[len(d)/2]
	}
	return (d[len(d)/2-1] + d[len(d)/2]) / 2
}

// medianWait is the median over rounds of the time classes waited for the agent's answers.
func medianWait(st []agentStats) time.Duration {
	d := make([]time.Duration, len(st))
	for i, s := range st {
		d[i] = s.Waited
	}
	return medianOf(d)
}

// ratios are the table's ratio columns: numerator and denominator modes.
var ratios = [][2]string{
	{"agent-first", "offline"},
	{"agent-second", "offline"},
	{"offline", "plain"},
	{"instrumenter", "plain"},
}

// writeTable prints the medians and ratios (step 5), wall / CPU in each cell.
func writeTable(w io.Writer, cfg *Config, ps []*prepared, left []string, before, after string) {
	fmt.Fprintf(w, "Medians of %d round(s), wall / CPU in ms (CPU: the command and every process it left behind; classes waited: the agent's --stats total of the time class loading waited for its answers); load average %s before, %s after.\n\n", cfg.Rounds, before, after)
	head := []string{"program", "classes sent (2nd run: from cache)", "classes waited, 1st / 2nd run"}
	head = append(head, modeNames...)
	for _, r := range ratios {
		head = append(head, r[0]+" ÷ "+r[1])
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", 3)+strings.Repeat(" ---: |", len(head)-3))
	for _, p := range ps {
		med := map[string]Sample{}
		for _, m := range modeNames {
			med[m] = median(p.Samples[m])
		}
		row := []string{p.Name, "–", "–"}
		if first, second := p.Stats["agent-first"], p.Stats["agent-second"]; len(first) > 0 && len(second) > 0 {
			row[1] = fmt.Sprintf("%d (%d)", first[len(first)-1].Sent, second[len(second)-1].Cached)
			row[2] = fmt.Sprintf("%d / %d", medianWait(first).Milliseconds(), medianWait(second).Milliseconds())
		}
		for _, m := range modeNames {
			row = append(row, fmt.Sprintf("%d / %d", med[m].Wall.Milliseconds(), med[m].CPU.Milliseconds()))
		}
		for _, r := range ratios {
			a, b := med[r[0]], med[r[1]]
			row = append(row, fmt.Sprintf("%.2f / %.2f", a.Wall.Seconds()/b.Wall.Seconds(), a.CPU.Seconds()/b.CPU.Seconds()))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintln(w)
	for _, p := range ps {
		fmt.Fprintf(w, "- %s: %s; accounts %s.\n", p.Name, p.What, strings.Join(p.Accounts, ", "))
	}
	for _, l := range left {
		fmt.Fprintf(w, "- left out: %s.\n", l)
	}
}
