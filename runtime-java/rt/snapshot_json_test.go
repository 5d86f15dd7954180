//go:build unix

package rt

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/internal/outfile/outfiletest"
)

// The JSON twin (version 3) writes the header's integers and the sites' offsets and lines as
// JSON numbers, and reads back as the text snapshot does. Both files get the modes of new files
// (0666 less the umask), as any program's would.
func TestSnapshotJSONNumbersAndModes(t *testing.T) {
	classes := build(t)
	dir := t.TempDir()
	table := filepath.Join(dir, "table.tsv")
	tab := "# heapledger table 1\naccount\t1\tcom.acme\nsite\t1\tarray\tint[]\tcom.acme.A.f()V\t4\t17\nsite\t2\tobject\tjava.lang.Object\tcom.acme.A.f()V\t9\t18\n"
	if err := os.WriteFile(table, []byte(tab), 0o644); err != nil {
		t.Fatal(err)
	}
	outfiletest.Umask(t, 0o027)
	cmd := exec.Command(need(t, "java"), "-cp", classes, "-Dheapledger.snapshot.dir="+dir, "-Dheapledger.table="+table,
		"-Dheapledger.snapshot.format=both", "heapledger.rt.SelfTest", "threads", "2", "100")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	jsons, _ := filepath.Glob(filepath.Join(dir, "heapledger-SelfTest-*-1.json"))
	if len(jsons) != 1 {
		t.Fatalf("want one JSON exit snapshot, found %v", jsons)
	}
	text := strings.TrimSuffix(jsons[0], ".json") + ".snapshot"
	for _, p := range []string{jsons[0], text} {
		if got := outfiletest.Perm(t, p); got != 0o640 {
			t.Errorf("%s: mode %o, want 0640 under umask 027", filepath.Base(p), got)
		}
	}
	raw, err := os.ReadFile(jsons[0])
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Version int
		Sites   map[string][]any
	}
	var top map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	json.Unmarshal(raw, &top)
	if v.Version != 5 {
		t.Errorf("JSON version %d, want 5", v.Version)
	}
	for _, k := range []string{"pid", "uptime_ms", "threads", "dropped"} {
		if _, ok := top[k].(float64); !ok {
			t.Errorf("%s is %#v, not a number", k, top[k])
		}
	}
	if f := v.Sites["1"]; len(f) != 5 || f[3] != 4.0 || f[4] != 17.0 || f[1] != "int[]" {
		t.Errorf("site 1: %#v, want offset and line as numbers", f)
	}
	js, err := snapshot.ReadFile(jsons[0])
	if err != nil {
		t.Fatal(err)
	}
	ts, err := snapshot.ReadFile(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"program", "pid", "dropped", "liveness"} {
		if js.Header[k] != ts.Header[k] || js.Header[k] == "" {
			t.Errorf("header %s: JSON %q, text %q", k, js.Header[k], ts.Header[k])
		}
	}
	if js.Sites[1] != ts.Sites[1] || js.Sites[1].Line != 17 {
		t.Errorf("site 1: JSON %+v, text %+v", js.Sites[1], ts.Sites[1])
	}
}
