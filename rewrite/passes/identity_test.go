package passes

import (
	"archive/zip"
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
)

// The identity pass decodes, re-frames and re-encodes every method of real jars and must give
// back every class byte for byte: the encoders reproduce javac's and other compilers' choices.
func TestIdentityRealJarsByteIdentical(t *testing.T) {
	for _, jar := range []string{"commons-lang3.jar", "guava.jar", "eclipse-ecj.jar"} {
		total, same := 0, 0
		for _, c := range jarClasses(t, jar) {
			name, data := c.name, c.data
			res, err := Identity().TransformClass(name, data)
			if err != nil {
				t.Errorf("%s!%s: %v", jar, name, err)
				continue
			}
			for _, s := range res.Skipped {
				if s.Method != "" {
					t.Errorf("%s!%s: identity skipped %s: %s", jar, name, s.Method, s.Reason())
				}
			}
			total++
			if res.Data == nil || bytes.Equal(res.Data, data) {
				same++
			} else {
				t.Errorf("%s!%s: identity changed the class", jar, name)
			}
		}
		t.Logf("%s: %d of %d classes byte-identical", jar, same, total)
	}
}

type namedClass struct {
	name string
	data []byte
}

// jarClasses reads every class of a Debian jar in /usr/share/java; a missing jar skips the test,
// or fails it under CI.
func jarClasses(t testing.TB, jar string) []namedClass {
	t.Helper()
	path := filepath.Join("/usr/share/java", jar)
	z, err := zip.OpenReader(path)
	if err != nil {
		testenv.Unavailable(t, "%s: %v", path, err)
	}
	defer z.Close()
	var out []namedClass
	for _, f := range z.File {
		if !strings.HasSuffix(f.Name, ".class") {
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, namedClass{f.Name, data})
	}
	return out
}
