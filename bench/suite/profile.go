package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// The profile modes (issue 29; docs/instrumentation.md, "Profiles"): heapledger-count-edges
// is a profiling run of path counters, whose snapshots carry every method's edge counts, and
// heapledger-count-paths-profile plans path counters from the snapshot of the last kept run of
// heapledger-count-edges on the same workload. -compare keeps its runs, so
//
//	-compare heapledger-count,heapledger-count-edges -workloads W
//	-compare heapledger-count-paths,heapledger-count-paths-profile -workloads W
//
// take the profile and then measure paths with it against paths without, on the same input.
const edgesModeName = "heapledger-count-edges"

func edgesMode() *Mode {
	return optIn(withVerify(offlineMode(edgesModeName, "count", []string{"--accounts", "*", "--counters", "edges", "--embed-runtime"}, nil,
		"heapledger-count-paths as a profiling run: every chord of the path counters counted, each snapshot carrying the methods' edge counts; the rows of heapledger-count"),
		verifySnapshot))
}

func profileMode() *Mode {
	var profiles []string // the workload's, set by Launch before the rewrite it runs
	m := offlineModeFor("heapledger-count-paths-profile", "count",
		[]string{"--accounts", "*", "--counters", "paths", "--profile", "SNAPSHOT", "--embed-runtime"},
		func(*Workload) []string {
			var args []string
			for _, p := range profiles {
				args = append(args, "--profile", p)
			}
			return args
		}, nil,
		"heapledger-count-paths planned from the snapshots of the last kept "+edgesModeName+" run of the workload (take one with -compare first)")
	launch := m.Launch
	m.Launch = func(env *Env, w *Workload, p *Prepared) (*Launch, error) {
		var err error
		if profiles, err = env.profileOf(w); err != nil {
			return nil, err
		}
		return launch(env, w, p)
	}
	return optIn(withVerify(m, verifySnapshot))
}

// profileOf copies the snapshots of the last kept heapledger-count-edges run of w (one per
// JVM the workload starts: lucene's index and search steps are two) to names their content
// decides, so that the rewritten jars, cached by their flags, follow the profile.
func (env *Env) profileOf(w *Workload) ([]string, error) {
	run := filepath.Join(env.Out, "runs", w.Name, edgesModeName, "r1")
	snaps, _ := filepath.Glob(filepath.Join(run, "*.snapshot"))
	if len(snaps) == 0 {
		return nil, fmt.Errorf("no snapshot in %s, want those of a kept %s run: take it with -compare heapledger-count,%s -workloads %s",
			run, edgesModeName, edgesModeName, w.Name)
	}
	var out []string
	for _, snap := range snaps {
		data, err := os.ReadFile(snap)
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(env.Out, "profiles", w.Name+"-"+sha256Hex(data)[:16]+".snapshot")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return nil, err
		}
		out = append(out, dst)
	}
	return out, nil
}
