package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLeaksCommand(t *testing.T) {
	var texts []string
	for i, live := range []int{10, 20, 30, 40} {
		texts = append(texts, fmt.Sprintf("# heapledger snapshot 2\nreason\tdemand\npid\t9\nuptime_ms\t%d\nliveness\tall\n"+
			"account\t1\tcom.acme\nsite\t1\tobject\tcom.acme.Conn\tcom.acme.Pool.open()V\t4\t17\n"+
			"alloc\t1\t1\t0\t%d\t0\t%d\t%d\t%d\t0\t0\t0\t%d\nend\n", 1000*(i+1), live*2, live*32, live, live*16, i+1))
	}
	paths := writeSnapshots(t, texts...)
	out, _, err := runCLI(t, append([]string{"leaks"}, paths...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 growing allocation sites in 4 snapshots", "com.acme.Conn", "10→40", "3/3", "com.acme.Pool.open()V line 17"} {
		if !strings.Contains(out, want) {
			t.Errorf("leaks output lacks %q:\n%s", want, out)
		}
	}
	var v struct {
		Leaks []struct {
			Account string
			Grew    int `json:"intervals_grown"`
		}
	}
	if js := cliJSON(t, &v, append([]string{"leaks", "--json"}, paths...)...); len(v.Leaks) != 1 || v.Leaks[0].Account != "com.acme" || v.Leaks[0].Grew != 3 {
		t.Errorf("json: %s", js)
	}
	if _, _, err := runCLI(t, "leaks", paths[0]); err == nil {
		t.Error("one snapshot accepted")
	}
}

// writeSnapshots writes each text to a snapshot file of its own and returns their paths.
func writeSnapshots(t *testing.T, texts ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, s := range texts {
		p := filepath.Join(dir, fmt.Sprintf("s%d.snapshot", i))
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// Snapshots of two programs are refused unless forced: their live counts are no one series.
func TestLeaksRefusesDifferentRuns(t *testing.T) {
	var texts []string
	for i, run := range []string{"program\tA\npid\t9", "program\tA\npid\t9", "program\tB\npid\t10"} {
		texts = append(texts, fmt.Sprintf("# heapledger snapshot 2\nreason\tdemand\n%s\nuptime_ms\t%d\nliveness\tall\n"+
			"account\t1\tcom.acme\nsite\t1\tobject\tcom.acme.Conn\tcom.acme.Pool.open()V\t4\t17\n"+
			"alloc\t1\t1\t0\t%d\t0\t%d\t%d\t%d\t0\t0\t0\t%d\nend\n", run, 1000*(i+1), 20*(i+1), 320*(i+1), 10*(i+1), 160*(i+1), i+1))
	}
	paths := writeSnapshots(t, texts...)
	out, _, err := runCLI(t, append([]string{"leaks"}, paths...)...)
	if err == nil || !strings.Contains(err.Error(), "program B, process 10") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("different programs: error %v, want one naming both runs and --force\n%s", err, out)
	}
	out, stderr, err := runCLI(t, append([]string{"leaks", "--force"}, paths...)...)
	if err != nil || !strings.Contains(out, "com.acme.Conn") || !strings.Contains(stderr, "comparing different runs") {
		t.Errorf("--force: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
}
