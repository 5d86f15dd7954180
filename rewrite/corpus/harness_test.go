package corpus

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
)

func TestCompare(t *testing.T) {
	ok := Outcome{Status: "OK"}
	before := map[string]Outcome{
		"A": ok, "B": ok, "C": {Status: "NoClassDefFoundError", Message: "x"}, "D": {Status: "VerifyError"},
		"E": {Status: "NoClassDefFoundError"}, "F": ok,
	}
	after := map[string]Outcome{
		"A": ok,                                      // still fine
		"B": {Status: "VerifyError", Message: "bad"}, // broken by the rewrite
		"C": {Status: "NoClassDefFoundError"},        // as before: a dependency is missing
		"D": {Status: "VerifyError"},                 // was already broken
		"E": {Status: "ClassFormatError"},            // newly malformed although it never linked
		// F is gone
	}
	var got []string
	for _, r := range Compare(before, after) {
		got = append(got, r.Class+":"+r.After.Status)
	}
	if want := []string{"B:VerifyError", "E:ClassFormatError", "F:missing"}; !reflect.DeepEqual(got, want) {
		t.Errorf("regressions %v, want %v", got, want)
	}
}

func TestParseOutcomes(t *testing.T) {
	got, err := ParseOutcomes([]byte("OK\ta.B\t\nVerifyError\ta.C\tjava.lang.VerifyError: Bad type\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got["a.B"] != (Outcome{Status: "OK"}) || got["a.C"].Status != "VerifyError" || got["a.C"].Message != "java.lang.VerifyError: Bad type" {
		t.Errorf("%v", got)
	}
	if _, err := ParseOutcomes([]byte("garbage line\n")); err == nil {
		t.Error("a malformed line was accepted")
	}
}

func TestLoadListFollowsClassPath(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "list.txt")
	os.WriteFile(list, []byte("# comment\n/nonexistent/x.jar\n"), 0o644)
	if _, err := LoadList(list); err == nil {
		t.Error("a missing corpus jar was accepted")
	}
	jackson := filepath.Join(DebianJava, "jackson-databind.jar")
	if _, err := os.Stat(jackson); err != nil {
		testenv.Unavailable(t, "%s not installed", jackson)
	}
	os.WriteFile(list, []byte("jackson-databind.jar   # its manifest names annotations and core\n"), 0o644)
	jars, err := LoadList(list)
	if err != nil {
		t.Fatal(err)
	}
	if len(jars) != 1 || len(jars[0].Classpath) < 2 {
		t.Fatalf("%+v", jars)
	}
	for _, p := range jars[0].Classpath {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("classpath holds a missing file: %v", err)
		}
	}
}

func TestParseSkips(t *testing.T) {
	out := "warning: account pattern x.* matched no class of the input, so its account stays empty\n" +
		"skipped 3 methods: stack map frames cannot be derived (for example a.jar!a/B.class run()V: load of local 2 (at offset 7))\n" +
		"skipped 1 methods: code would exceed 65535 bytes (for example a.jar!a/C.class big()V)\n" +
		"rewrote 4 methods with a fallback: kept on per-site counters: jsr/ret subroutine (for example a.jar!a/D.class f()V)\n" +
		"skipped 2 classes: module-info is never rewritten (for example a.jar!module-info.class)\n" +
		"out.jar: pass count: 9 classes: 9 rewritten, 0 unchanged, 0 failed; 4 methods skipped (stack map frames cannot be derived: 3; code would exceed 65535 bytes: 1); 12 entries written\n"
	got, err := ParseSkips([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"stack map frames cannot be derived": 3, "code would exceed 65535 bytes": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSkips = %v, want %v", got, want)
	}
}
