package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.snapshot")
	snap := "# heapledger snapshot 1\nreason\texit\nprogram\tDemo\npid\t7\n" +
		"account\t1\tcom.acme.*\naccount\t2\torg.lib\n" +
		"site\t1\tobject\tjava.lang.String\tcom.acme.A.run()V\t3\t10\n" +
		"site\t2\tarray\tbyte[]\torg.lib.B.buf(I)[B\t1\t-1\n" +
		"alloc\t1\t1\t0\t100\t0\t2400\nalloc\t2\t2\t0\t4\t4096\t16448\nend\n"
	if err := os.WriteFile(p, []byte(snap), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "report", p)
	if err != nil {
		t.Fatal(err)
	}
	lib := strings.Index(out, "org.lib")
	acme := strings.Index(out, "com.acme.*")
	if lib < 0 || acme < 0 || lib > acme {
		t.Errorf("accounts missing or not sorted by bytes:\n%s", out)
	}
	for _, want := range []string{"100 objects", "2400 B", "16.1 KiB", "byte[]", "com.acme.A.run()V line 10 @3 java.lang.String"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	var v struct {
		Accounts []struct {
			Name   string
			Totals struct{ Objects, Arrays, Elements, Bytes int64 }
		}
	}
	cliJSON(t, &v, "report", "--json", p)
	if len(v.Accounts) != 2 || v.Accounts[0].Totals.Elements != 4096 {
		t.Errorf("json: %+v", v)
	}
	if _, _, err := runCLI(t, "report", filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file error should name it: %v", err)
	}
	if _, _, err := runCLI(t, "report"); err == nil {
		t.Error("no argument accepted")
	}
}

// `report --json` gives the header's integers as JSON numbers ("pid": "13933" was a string).
func TestReportJSONNumbers(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.snapshot")
	snap := "# heapledger snapshot 2\nreason\texit\nprogram\tDemo\npid\t13933\nuptime_ms\t420\nthreads\t3\ndropped\t0\nliveness\toff\n" +
		"account\t1\tcom.acme\nsite\t1\tobject\tjava.lang.String\tcom.acme.A.run()V\t3\t10\n" +
		"alloc\t1\t1\t0\t100\t0\t2400\t-\t-\t-\t-\t-\t-\nend\n"
	if err := os.WriteFile(p, []byte(snap), 0o644); err != nil {
		t.Fatal(err)
	}
	var v struct{ Header map[string]any }
	js := cliJSON(t, &v, "report", "--json", p)
	for _, k := range []string{"pid", "uptime_ms", "threads", "dropped"} {
		if _, ok := v.Header[k].(float64); !ok {
			t.Errorf("header %s is %#v, not a number:\n%s", k, v.Header[k], js)
		}
	}
}

// `report DIR` says DIR is a directory, not that it is an empty snapshot.
func TestReportDirectory(t *testing.T) {
	dir := t.TempDir()
	_, _, err := runCLI(t, "report", dir)
	if err == nil || !strings.Contains(err.Error(), dir+" is a directory; give a snapshot file (heapledger-*.snapshot") {
		t.Errorf("report DIR: %v", err)
	}
}
