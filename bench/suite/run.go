package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Sample is one timed run: wall time of all its JVM invocations and the largest peak RSS
// among them.
type Sample struct {
	Wall   time.Duration
	CPU    time.Duration // user + system time of the JVM: less sensitive than wall time to other load
	RSSKiB int64
	// First is the time from the start of the workload's first JVM to the first line it wrote
	// on standard output or standard error, leaving out heapledger's and the JVM's own notes
	// (0 when it wrote none): the start-up a user waits through.
	First time.Duration
	// Agent is what the heapledger agent's --stats line said at the JVM's exit (the invocation
	// that sent the most classes); nil for modes without the agent.
	Agent *AgentStats
}

// Pair is a mode's run and the plain run just before it; ratios are taken within a pair, so
// slow drift of the machine's load affects both sides alike.
type Pair struct{ Plain, Mode Sample }

// Result collects one workload's measurements across rounds.
type Result struct {
	W        *Workload
	P        *Prepared
	Launches map[string]*Launch
	Ref      *Output // the first plain run's output; every later run must match it
	Plain    []Sample
	Pairs    map[string][]Pair
	Failed   map[string]string // mode → why it failed on this workload
	Modes    []*Mode           // the modes this workload runs, plain first
}

// Options are the knobs of a suite run.
type Options struct {
	Warmup, Runs int
	Timeout      time.Duration
	// Unpaired runs plain once per round and pairs every mode with that one run: half the JVM
	// runs, for correctness-only (-quick) runs whose ratios nobody quotes.
	Unpaired bool
	// MaxTime, when set, stops starting new rounds once another round of the length of the
	// last one would end past it; the doc then says how many measured rounds were completed.
	MaxTime time.Duration
	// AfterRound is called after every round with the number of measured rounds done, so the
	// doc is rewritten as results come in and an interrupted run loses at most one round.
	AfterRound func(measuredDone int)
}

// errWrongOutput marks failures where the program ran but produced something else than plain.
var errWrongOutput = errors.New("wrong output")

// runSuite measures every workload in every available mode. Rounds are outermost, so each
// round sees every workload once; inside a workload, modes alternate with plain (plain, A,
// plain, B, …). A failing mode is not run again on that workload; the others carry on, and the
// failure is reported at the end.
// It returns why it stopped before the last round, or "" when it ran them all.
func runSuite(env *Env, results []*Result, opt Options) stopReason {
	rounds := opt.Warmup + opt.Runs
	start := time.Now()
	for round := 0; round < rounds; round++ {
		roundStart := time.Now()
		measured := round >= opt.Warmup
		label := fmt.Sprintf("round %d/%d", round+1, rounds)
		if !measured {
			label += " (warm-up)"
		}
		for _, r := range results {
			if env.Ctx.Err() != nil {
				env.logf("interrupted: the doc keeps the last completed round")
				return stopInterrupted
			}
			if r.Failed["plain"] != "" {
				continue
			}
			var others []*Mode
			for _, m := range r.Modes[1:] {
				if r.Failed[m.Name] == "" {
					others = append(others, m)
				}
			}
			if !measured {
				// Nothing of a warm-up round is recorded, so each mode runs once, unpaired: it
				// warms the page cache and the machine for every mode at the least cost.
				for _, m := range append([]*Mode{r.Modes[0]}, others...) {
					if _, ok := r.runLogged(env, m, round, label, opt); !ok && m == r.Modes[0] {
						break
					}
				}
				continue
			}
			if len(others) == 0 || opt.Unpaired {
				ps, ok := r.runLogged(env, r.Modes[0], round, label, opt)
				if !ok {
					continue
				}
				r.Plain = append(r.Plain, ps)
				for _, m := range others {
					if ms, ok := r.runLogged(env, m, round, label, opt); ok {
						r.Pairs[m.Name] = append(r.Pairs[m.Name], Pair{Plain: ps, Mode: ms})
					}
				}
				continue
			}
			for _, m := range others {
				ps, ok := r.runLogged(env, r.Modes[0], round, label, opt)
				if !ok {
					break
				}
				ms, ok := r.runLogged(env, m, round, label, opt)
				r.Plain = append(r.Plain, ps)
				if ok {
					r.Pairs[m.Name] = append(r.Pairs[m.Name], Pair{Plain: ps, Mode: ms})
				}
			}
		}
		if env.Ctx.Err() != nil {
			env.logf("interrupted: the doc keeps the last completed round")
			return stopInterrupted
		}
		done := round + 1 - opt.Warmup
		if done < 0 {
			done = 0
		}
		if opt.AfterRound != nil {
			opt.AfterRound(done)
		}
		last := time.Since(roundStart)
		if opt.MaxTime > 0 && round+1 < rounds && done > 0 && time.Since(start)+last > opt.MaxTime {
			env.logf("stopping after %d measured round(s): another round (about %s) would pass -max-time %s",
				done, last.Round(time.Second), opt.MaxTime)
			return stopMaxTime
		}
	}
	return ""
}

// stopReason says why a suite run ended before its last round.
type stopReason string

const (
	stopMaxTime     stopReason = "max-time"
	stopInterrupted stopReason = "interrupted"
)

func (r *Result) runLogged(env *Env, m *Mode, round int, label string, opt Options) (Sample, bool) {
	s, err := r.runOnce(env, m, round, opt.Timeout)
	if err != nil && env.Ctx.Err() != nil {
		// An interrupted run says nothing about the mode.
		return s, false
	}
	if err != nil {
		r.Failed[m.Name] = err.Error()
		env.logf("%s %s %s: FAILED: %v", label, r.W.Name, m.Name, err)
		return s, false
	}
	env.logf("%s %s %s: %.2f s wall, %.2f s CPU, %d MiB", label, r.W.Name, m.Name, s.Wall.Seconds(), s.CPU.Seconds(), s.RSSKiB>>10)
	return s, true
}

// runOnce runs the workload once in mode m in a fresh directory and checks its output.
func (r *Result) runOnce(env *Env, m *Mode, round int, timeout time.Duration) (Sample, error) {
	l := r.Launches[m.Name]
	dir := filepath.Join(env.Out, "runs", r.W.Name, m.Name, fmt.Sprintf("r%d", round+1))
	if err := os.RemoveAll(dir); err != nil {
		return Sample{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Sample{}, err
	}
	var s Sample
	var outs []StepOutput
	for i, st := range r.P.Steps {
		var args []string
		for _, a := range l.JVM {
			args = append(args, strings.ReplaceAll(a, "{run}", dir))
		}
		args = append(args, st.JVM...)
		args = append(args, "-cp", strings.Join(l.Classpath, string(os.PathListSeparator)), st.Main)
		args = append(args, st.Args...)
		// The exact command, so a run can be repeated by hand (profiling, a single slow mode).
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("step%d.cmd", i+1)), []byte(shellQuote(append([]string{env.Java}, args...))+"\n"), 0o644)
		out, sample, err := runTimed(env.Ctx, env.Java, args, dir, timeout)
		if i == 0 {
			s.First = sample.First
		}
		if a := parseAgentStats(out.Stderr); a != nil && (s.Agent == nil || a.Classes > s.Agent.Classes) {
			s.Agent = a
		}
		s.Wall += sample.Wall
		s.CPU += sample.CPU
		if sample.RSSKiB > s.RSSKiB {
			s.RSSKiB = sample.RSSKiB
		}
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("step%d.stdout", i+1)), out.Stdout, 0o644)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("step%d.stderr", i+1)), out.Stderr, 0o644)
		if err != nil {
			return s, fmt.Errorf("run %d, step %d (%s): %v; stderr:\n%s\n(kept in %s)", round+1, i+1, st.Main, err, headTail(out.Stderr, 6, 6), dir)
		}
		outs = append(outs, out)
	}
	got, err := r.P.Check(dir, outs)
	if err != nil {
		return s, fmt.Errorf("run %d: output check failed: %v (kept in %s)", round+1, err, dir)
	}
	if r.Ref == nil {
		r.Ref = &got
	} else if got.Digest() != r.Ref.Digest() {
		return s, fmt.Errorf("%w in run %d: digest %.16s, plain's %.16s; first difference at %s (kept in %s)",
			errWrongOutput, round+1, got.Digest(), r.Ref.Digest(), firstDifference(*r.Ref, got), dir)
	}
	if m.Verify != nil {
		if err := m.Verify(env, dir); err != nil {
			return s, fmt.Errorf("run %d: the %s mode did not do its work: %v (kept in %s)", round+1, m.Name, err, dir)
		}
	}
	if !env.Keep {
		if err := os.RemoveAll(dir); err != nil {
			return s, err
		}
	}
	return s, nil
}

// runTimed runs one JVM and measures its wall time from start to exit and its peak resident
// set (the kernel's ru_maxrss for the child, in KiB on Linux).
func runTimed(parent context.Context, java string, args []string, dir string, timeout time.Duration) (StepOutput, Sample, error) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	start := time.Now()
	fo, fe := &firstWrite{w: &stdout, start: start}, &firstWrite{w: &stderr, start: start}
	cmd.Stdout, cmd.Stderr = fo, fe
	err := cmd.Run()
	wall := time.Since(start)
	var s Sample
	s.Wall = wall
	s.First = fo.after
	if fe.after > 0 && (s.First == 0 || fe.after < s.First) {
		s.First = fe.after
	}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			s.RSSKiB = ru.Maxrss
			s.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	out := StepOutput{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if parent.Err() != nil {
		return out, s, fmt.Errorf("interrupted")
	}
	if ctx.Err() == context.DeadlineExceeded {
		return out, s, fmt.Errorf("timed out after %s", timeout)
	}
	return out, s, err
}

// notOutput are the starts of lines a JVM writes that are not the program's output: the
// agent's and the runtime's notes, and the JVM's own warnings (the agent's boot class path
// makes it say that class-data sharing now covers boot classes only).
var notOutput = [][]byte{[]byte("heapledger"), []byte("OpenJDK 64-Bit Server VM warning"), []byte("WARNING: ")}

// firstWrite passes writes on and notes how long after start the first line of the program's
// own output began.
type firstWrite struct {
	w     *bytes.Buffer
	start time.Time
	after time.Duration
	pos   int // start of the first line not yet classified
}

func (f *firstWrite) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if f.after != 0 {
		return n, err
	}
	b := f.w.Bytes()
	for f.pos < len(b) {
		rest := b[f.pos:]
		nl := bytes.IndexByte(rest, '\n')
		line := rest
		if nl >= 0 {
			line = rest[:nl]
		}
		skip, undecided := false, false
		for _, pre := range notOutput {
			if bytes.HasPrefix(line, pre) {
				skip = true
			} else if nl < 0 && bytes.HasPrefix(pre, line) {
				undecided = true // too short yet to tell
			}
		}
		if !skip && undecided {
			break
		}
		if !skip {
			f.after = time.Since(f.start)
			break
		}
		if nl < 0 {
			break // a note still being written; its end decides nothing
		}
		f.pos += nl + 1
	}
	return n, err
}
