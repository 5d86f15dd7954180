package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAdaptRefusals: --adapt only under the agent, with --counters paths and no --profile, and
// a threshold of 0 or more; each refusal says why (fixtures/paths TestAdaptKeepsRows runs it).
func TestAdaptRefusals(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jar")
	writeTestJar(t, in, "A.class")
	snap := filepath.Join(dir, "p.snapshot")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rewrite", "--counters", "paths", "--adapt", "100", in, "-o", filepath.Join(dir, "o.jar")}, "--adapt re-instruments classes while they run, which only the agent can"},
		{[]string{"agent", "--counters", "sites", "--adapt", "100", "-o", filepath.Join(dir, "a1")}, "--adapt needs --counters paths"},
		{[]string{"agent", "--counters", "edges", "--adapt", "100", "-o", filepath.Join(dir, "a2")}, "--adapt needs --counters paths"},
		{[]string{"agent", "--counters", "paths", "--adapt", "100", "--profile", snap, "-o", filepath.Join(dir, "a3")}, "it cannot go with --profile"},
		{[]string{"agent", "--counters", "paths", "--adapt", "-1", "-o", filepath.Join(dir, "a4")}, "--adapt -1: must be 0 (off) or more"},
	} {
		_, _, err := runCLI(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one saying %q", c.args, err, c.want)
		}
	}
}
