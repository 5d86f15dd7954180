package classfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/internal/testjars"
)

type classEntry struct {
	name string
	data []byte
}

// jarClasses returns every .class entry of a Debian jar in /usr/share/java.
func jarClasses(t testing.TB, jar string) []classEntry {
	t.Helper()
	var out []classEntry
	testjars.Each(t, jar, func(entry string, data []byte) {
		out = append(out, classEntry{entry, data})
	})
	if len(out) == 0 {
		t.Fatalf("%s has no classes", jar)
	}
	return out
}

const jdk25Bin = "/usr/lib/jvm/temurin-25-jdk-amd64/bin"

// javacPath finds javac for a JDK: "" means the default JDK on PATH.
func javacPath(t testing.TB, jdkBin string) string {
	t.Helper()
	if jdkBin == "" {
		p, err := exec.LookPath("javac")
		if err != nil {
			testenv.Unavailable(t, "javac not found on PATH")
		}
		return p
	}
	p := filepath.Join(jdkBin, "javac")
	if _, err := os.Stat(p); err != nil {
		testenv.Unavailable(t, "%s not found", p)
	}
	return p
}

var (
	compiledMu sync.Mutex
	compiled   = map[string][]classEntry{}
)

// compileJava compiles sources (file name → text) and returns the class files by name. Results
// are kept for the run: javac is the slowest part of these tests and several use the same files.
func compileJava(t testing.TB, javac string, args []string, sources map[string]string) []classEntry {
	t.Helper()
	var names []string
	for n := range sources {
		names = append(names, n)
	}
	sort.Strings(names)
	key := javac + "\x00" + strings.Join(args, "\x00") + "\x00" + strings.Join(names, "\x00")
	compiledMu.Lock()
	defer compiledMu.Unlock()
	if res, ok := compiled[key]; ok {
		return res
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	out := filepath.Join(dir, "out")
	var files []string
	for name, text := range sources {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	cmd := exec.Command(javac, append(append(append([]string{}, args...), "-d", out), files...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", javac, err, b)
	}
	var res []classEntry
	err := filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".class") {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(out, p)
		res = append(res, classEntry{filepath.ToSlash(rel), b})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(res, func(i, j int) bool { return res[i].name < res[j].name })
	compiled[key] = res
	return res
}
