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
	var profile string // the workload's, set by Launch before the rewrite it runs
	m := offlineModeFor("heapledger-count-paths-profile", "count",
		[]string{"--accounts", "*", "--counters", "paths", "--profile", "SNAPSHOT", "--embed-runtime"},
		func(*Workload) []string { return []string{"--profile", profile} }, nil,
		"heapledger-count-paths planned from the snapshot of the last kept "+edgesModeName+" run of the workload (take one with -compare first)")
	launch := m.Launch
	m.Launch = func(env *Env, w *Workload, p *Prepared) (*Launch, error) {
		var err error
		if profile, err = env.profileOf(w); err != nil {
			return nil, err
		}
		return launch(env, w, p)
	}
	return optIn(withVerify(m, verifySnapshot))
}

// profileOf copies the snapshot of the last kept heapledger-count-edges run of w to a name
// its content decides, so that the rewritten jars, cached by their flags, follow the profile.
func (env *Env) profileOf(w *Workload) (string, error) {
	run := filepath.Join(env.Out, "runs", w.Name, edgesModeName, "r1")
	snaps, _ := filepath.Glob(filepath.Join(run, "*.snapshot"))
	if len(snaps) != 1 {
		return "", fmt.Errorf("%d snapshots in %s, want the one of a kept %s run: take it with -compare heapledger-count,%s -workloads %s",
			len(snaps), run, edgesModeName, edgesModeName, w.Name)
	}
	data, err := os.ReadFile(snaps[0])
	if err != nil {
		return "", err
	}
	dst := filepath.Join(env.Out, "profiles", w.Name+"-"+sha256Hex(data)[:16]+".snapshot")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	return dst, os.WriteFile(dst, data, 0o644)
}
