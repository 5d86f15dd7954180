package snapshot

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

const sample = "# heapledger snapshot 1\n" +
	"reason\texit\nprogram\tDemo\npid\t42\n" +
	"account\t0\t<unaccounted>\naccount\t1\tcom.acme.*\n" +
	"site\t3\tobject\tjava.lang.String\tcom.acme.A.f()V\t7\t12\n" +
	"site\t4\tmulti\tint[][]\tcom.acme.A.g()V\t9\t-1\n" +
	"alloc\t1\t3\t0\t10\t0\t240\n" +
	"alloc\t1\t4\t0\t1\t2\t24\n" +
	"alloc\t1\t4\t1\t2\t6\t64\n" +
	"alloc\t0\t3\t0\t5\t0\t-1\n" +
	"end\n"

func TestReadTextAndSummarize(t *testing.T) {
	s, err := Read(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if s.Header["program"] != "Demo" || len(s.Rows) != 4 {
		t.Fatalf("header %v rows %d", s.Header, len(s.Rows))
	}
	rep := s.Summarize(10)
	if rep.Accounts[0].Name != "com.acme.*" {
		t.Fatalf("largest account first: %+v", rep.Accounts)
	}
	a := rep.Accounts[0].Totals
	if a.Objects != 10 || a.Arrays != 3 || a.Elements != 8 || a.Bytes != 328 {
		t.Errorf("account totals %+v", a)
	}
	u := rep.Accounts[1].Totals
	if u.Objects != 5 || u.UnknownRows != 1 || u.Bytes != 0 {
		t.Errorf("unknown sizes must be flagged, not counted as zero: %+v", u)
	}
	types := map[string]int64{}
	for _, e := range rep.Accounts[0].TopTypes {
		types[e.Name] = e.Totals.Arrays + e.Totals.Objects
	}
	if types["int[]"] != 2 || types["int[][] (reference levels)"] != 1 || types["java.lang.String"] != 10 {
		t.Errorf("types %v", types)
	}
}

func TestTruncatedAndWrongVersion(t *testing.T) {
	if _, err := Read(strings.NewReader(strings.TrimSuffix(sample, "end\n"))); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated snapshot: %v", err)
	}
	if _, err := Read(strings.NewReader(strings.Replace(sample, "snapshot 1", "snapshot 9", 1))); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("version: %v", err)
	}
	if _, err := Read(strings.NewReader("hello\n")); err == nil {
		t.Error("garbage accepted")
	}
	if _, err := Read(strings.NewReader(strings.Replace(sample, "alloc\t1\t3\t0\t10\t0\t240", "alloc\t1\tx\t0\t10\t0\t240", 1))); err == nil || !strings.Contains(err.Error(), "line 9") {
		t.Errorf("bad number should name the line: %v", err)
	}
}

func TestReadJSON(t *testing.T) {
	j := `{"format":"heapledger-snapshot","version":1,"reason":"exit","program":"P","accounts":{"0":"<unaccounted>"},` +
		`"sites":{"3":["object","java.lang.Object","M.m()V","0","-1"]},` +
		`"allocations":[{"account":0,"site":3,"part":0,"count":2,"elements":0,"bytes":32}]}`
	s, err := Read(strings.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	if s.Header["program"] != "P" || s.Rows[0].Bytes != 32 || s.Sites[3].Type != "java.lang.Object" {
		t.Errorf("%+v", s)
	}
}

// JSON version 3 writes the header's integers and the site lines' offset and line as numbers;
// versions 1 and 2 wrote strings, and "dropped" with its first failure. Both read the same.
func TestJSONNumbersOrStrings(t *testing.T) {
	const rest = `"accounts":{"0":"<unaccounted>"},"allocations":[{"account":0,"site":3,"part":0,"count":2,"elements":0,"bytes":32}]}`
	v2 := `{"format":"heapledger-snapshot","version":2,"reason":"exit","program":"P","pid":"13933","uptime_ms":"250","threads":"4",` +
		`"dropped":"2 first: java.lang.OutOfMemoryError","sites":{"3":["object","java.lang.Object","M.m()V","7","12"]},` + rest
	v3 := `{"format":"heapledger-snapshot","version":3,"reason":"exit","program":"P","pid":13933,"uptime_ms":250,"threads":4,` +
		`"dropped":2,"dropped_first":"java.lang.OutOfMemoryError","sites":{"3":["object","java.lang.Object","M.m()V",7,12]},` + rest
	want := map[string]string{"reason": "exit", "program": "P", "pid": "13933", "uptime_ms": "250", "threads": "4", "dropped": "2",
		"dropped_first": "java.lang.OutOfMemoryError"}
	for name, j := range map[string]string{"version 2": v2, "version 3": v3} {
		s, err := Read(strings.NewReader(j))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(map[string]string(s.Header), want) {
			t.Errorf("%s: header %v, want %v", name, s.Header, want)
		}
		if site := s.Sites[3]; site.Offset != 7 || site.Line != 12 {
			t.Errorf("%s: site %+v", name, site)
		}
	}
	if _, err := Read(strings.NewReader(strings.Replace(v3, `"version":3`, `"version":6`, 1))); err == nil || !strings.Contains(err.Error(), "version 6") {
		t.Errorf("version 6: %v", err)
	}
}

// A report's header gives integers as JSON numbers: `report --json` wrote "pid": "13933".
func TestReportHeaderNumbers(t *testing.T) {
	s, err := Read(strings.NewReader(strings.Replace(sample, "pid\t42\n", "pid\t42\nuptime_ms\t250\nthreads\t3\ndropped\t1 first: x\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s.Summarize(1))
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Header map[string]any }
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"pid": 42.0, "uptime_ms": 250.0, "threads": 3.0, "dropped": 1.0, "dropped_first": "x", "program": "Demo"} {
		if got := v.Header[k]; got != want {
			t.Errorf("header %s: %#v, want %#v", k, got, want)
		}
	}
}

// A directory is not an empty snapshot: the error says what it is and names the newest
// snapshot in it.
func TestReadFileDirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadFile(dir); err == nil || !strings.Contains(err.Error(), dir+" is a directory; give a snapshot file") {
		t.Errorf("empty directory: %v", err)
	}
	old, newer := filepath.Join(dir, "heapledger-M-1-1.snapshot"), filepath.Join(dir, "heapledger-M-1-2.snapshot")
	for i, p := range []string{old, newer} {
		if err := os.WriteFile(p, []byte(sample), 0o644); err != nil {
			t.Fatal(err)
		}
		tm := time.Now().Add(time.Duration(i-2) * time.Minute)
		os.Chtimes(p, tm, tm)
	}
	if _, err := ReadFile(dir); err == nil || !strings.Contains(err.Error(), "such as "+newer+", the newest there") {
		t.Errorf("directory with snapshots: %v", err)
	}
	empty := filepath.Join(dir, "empty.snapshot")
	os.WriteFile(empty, nil, 0o644)
	if _, err := ReadFile(empty); err == nil || !strings.Contains(err.Error(), "empty snapshot") {
		t.Errorf("empty file: %v", err)
	}
}

// TestReadErrorsKeepTheirCause: a malformed number and malformed JSON are the causes of the
// reader's errors, reachable with errors.As.
func TestReadErrorsKeepTheirCause(t *testing.T) {
	_, err := Read(strings.NewReader("# heapledger snapshot 4\nsite\tx1\n"))
	var num *strconv.NumError
	if !errors.As(err, &num) {
		t.Errorf("a bad site ID: %v, want a *strconv.NumError inside", err)
	}
	_, err = Read(strings.NewReader("{\"format\": "))
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated JSON: %v, want the decoder's error inside", err)
	}
}
