package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// AgentStats is the heapledger agent's --stats line at a JVM's exit (docs/agent.md): how many
// classes it sent to the transform service and how long each took, from request to answer.
type AgentStats struct {
	Classes         int
	MedianMs, P99Ms float64
}

var agentStatsLine = regexp.MustCompile(`heapledger agent: (\d+) classes sent, .*transform latency per class: median ([0-9.]+) ms, p99 ([0-9.]+) ms`)

// parseAgentStats finds the agent's --stats line in a JVM's standard error; nil when there is
// none (not an agent mode, or the agent did not start).
func parseAgentStats(stderr []byte) *AgentStats {
	m := agentStatsLine.FindSubmatch(stderr)
	if m == nil {
		return nil
	}
	n, err1 := strconv.Atoi(string(m[1]))
	med, err2 := strconv.ParseFloat(string(m[2]), 64)
	p99, err3 := strconv.ParseFloat(string(m[3]), 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return nil
	}
	return &AgentStats{Classes: n, MedianMs: med, P99Ms: p99}
}

// agentMode runs the unmodified workload under heapledger's -javaagent, with the count options
// of the offline row (`heapledger agent FLAGS --stats -o DIR --print-jvm-option`, once per
// workload): classes are rewritten by `heapledger serve` as they load. --stats makes every JVM
// print its transform latencies at exit, which the start-up table reports. --no-cache keeps
// every run a first run: with the transform cache, each run after a workload's first would be
// answered from it, and the rows would mix the two (docs/agent.md, "The cache of transformed
// classes", has the cached figures). An optIn mode runs only when named in -modes.
func agentMode(name string, flags []string, optIn bool, what string) *Mode {
	all := append(append([]string{}, flags...), "--stats", "--no-cache")
	return &Mode{
		Name:  name,
		What:  what + " (`heapledger agent " + strings.Join(all, " ") + "`, as -javaagent)",
		OptIn: optIn,
		Available: func(env *Env) error {
			if _, err := env.commandHelp("agent", all); err != nil {
				return err
			}
			_, err := env.agentJar()
			return err
		},
		Launch: func(env *Env, w *Workload, p *Prepared) (*Launch, error) {
			flags, err := accountsFor(all, w)
			if err != nil {
				return nil, err
			}
			opt, prep, err := env.writeAgent(name, flags, w)
			if err != nil {
				return nil, err
			}
			l, _ := plainLaunch(env, w, p)
			l.JVM = append(l.JVM, opt)
			l.Prep = prep
			return l, nil
		},
		Verify: verifySnapshot,
	}
}

// accountsFor puts the workload's accounts where flags say LIST (heapledger-agent-accounts).
func accountsFor(flags []string, w *Workload) ([]string, error) {
	out := append([]string(nil), flags...)
	for i, f := range out {
		if f == "LIST" {
			if len(w.Accounts) == 0 {
				return nil, fmt.Errorf("workload %s names no accounts", w.Name)
			}
			out[i] = strings.Join(w.Accounts, ",")
		}
	}
	return out, nil
}

// agentJar is the agent jar the binary would use: $HEAPLEDGER_AGENT, else build/ of the checkout
// (make build's output; bin/ holds a copy of it).
func (env *Env) agentJar() (string, error) {
	if p := os.Getenv("HEAPLEDGER_AGENT"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("HEAPLEDGER_AGENT: %v", err)
		}
		return p, nil
	}
	p := filepath.Join(env.Root, "build", "heapledger-agent.jar")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("build/heapledger-agent.jar is not built (make build)")
	}
	return p, nil
}

// writeAgent writes the agent for one mode and workload and returns its -javaagent option. The
// binary is copied beside the agent jar first and the option names the copy as the transform
// service, so a rebuild in the checkout during a long suite run cannot change what later runs
// of this mode use (as offline modes copy the jars they need).
func (env *Env) writeAgent(mode string, flags []string, w *Workload) (string, string, error) {
	binSum, err := fileDigest(env.Bin)
	if err != nil {
		return "", "", err
	}
	jar, err := env.agentJar()
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(env.Out, "agent", mode, w.Name)
	if err := os.RemoveAll(dir); err != nil {
		return "", "", err
	}
	bin := filepath.Join(env.Out, "agent", "bin-"+binSum[:16], "heapledger")
	if _, err := os.Stat(bin); err != nil {
		b, err := os.ReadFile(env.Bin)
		if err != nil {
			return "", "", err
		}
		// Written under a temporary name and renamed: modes prepare in parallel.
		tmp := fmt.Sprintf("%s.%d.%s", bin, os.Getpid(), mode+"-"+w.Name)
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(tmp, b, 0o755); err != nil {
			return "", "", err
		}
		if err := os.Rename(tmp, bin); err != nil {
			return "", "", err
		}
	}
	args := append(append([]string{"agent"}, flags...), "-o", dir, "--print-jvm-option")
	env.logf("%s: %s %s", w.Name, bin, strings.Join(args, " "))
	start := time.Now()
	cmd := exec.Command(bin, args...)
	// The service is the binary that wrote the agent, never one a variable points elsewhere.
	var envv []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "HEAPLEDGER_BIN=") && !strings.HasPrefix(e, "HEAPLEDGER_AGENT=") {
			envv = append(envv, e)
		}
	}
	cmd.Env = append(envv, "HEAPLEDGER_AGENT="+jar)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("%s agent for %s failed: %v\n%s", mode, w.Name, err, tail(errb.Bytes(), 20))
	}
	opt := strings.TrimSpace(out.String())
	if !strings.HasPrefix(opt, "-javaagent:") || strings.Contains(opt, "\n") {
		return "", "", fmt.Errorf("%s agent --print-jvm-option printed %q, not one -javaagent option", mode, clip(opt))
	}
	return opt, fmt.Sprintf("agent %.1f s", time.Since(start).Seconds()), nil
}

// verifyObjectInit checks, beyond the snapshot, that the Object.<init> hook counted: its sites
// (kind init) are in the snapshot, so a hook that silently stayed off cannot look cheap.
func verifyObjectInit(env *Env, runDir string) error {
	return checkSnapshots(runDir, "\tinit\t", "no Object.<init> hook sites (kind init)")
}
