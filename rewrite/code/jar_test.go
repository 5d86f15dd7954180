package code

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// realJars are Debian jars whose every method must survive decode→encode unchanged.
var realJars = []string{"guava.jar", "eclipse-ecj.jar", "icu4j.jar", "h2.jar", "bcprov.jar", "commons-lang3.jar", "xalan2.jar"}

// needJar returns the path of a Debian jar, skipping outside CI when it is missing.
func needJar(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("/usr/share/java", name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s missing in CI (installed by scripts/install-deps.sh): %v", p, err)
		}
		t.Skipf("%s not installed; run scripts/install-deps.sh", p)
	}
	return p
}

// jarMethod is one method with code from a real jar.
type jarMethod struct {
	class *classfile.Class
	m     *classfile.Member
	code  *classfile.Code
	raw   *classfile.Attribute
	info  Method
}

// eachMethod calls f for every method with code of every class in the jar.
func eachMethod(t testing.TB, path string, f func(jm *jarMethod)) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if !strings.HasSuffix(zf.Name, ".class") || strings.HasSuffix(zf.Name, "module-info.class") {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		c, err := classfile.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", zf.Name, err)
		}
		for _, m := range c.Methods {
			code, raw, err := c.MethodCode(m)
			if err != nil {
				t.Fatalf("%s: %v", zf.Name, err)
			}
			if code == nil {
				continue
			}
			f(&jarMethod{class: c, m: m, code: code, raw: raw, info: Method{
				Class: c.Name(), Name: m.Name(c.Pool), Desc: m.Descriptor(c.Pool), Access: m.AccessFlags, Major: c.Major}})
		}
	}
}

// TestRoundTripRealJars decodes and re-encodes every method of several real jars: the Code
// attribute must come back byte for byte.
func TestRoundTripRealJars(t *testing.T) {
	for _, jar := range realJars {
		t.Run(jar, func(t *testing.T) {
			path := needJar(t, jar)
			methods, failed, forced := 0, 0, 0
			var jsr, switches, wide int
			eachMethod(t, path, func(jm *jarMethod) {
				methods++
				b, err := Decode(jm.code, jm.class.Pool, jm.info)
				if err != nil {
					failed++
					if failed < 5 {
						t.Errorf("decode: %v", err)
					}
					return
				}
				var hasJsr, hasSwitch, hasWide bool
				for n := b.First(); n != nil; n = n.Next() {
					hasJsr = hasJsr || n.Op == JSR || n.Op == JSR_W
					hasSwitch = hasSwitch || n.Switch != nil
					hasWide = hasWide || n.Wide
				}
				jsr += boolInt(hasJsr)
				switches += boolInt(hasSwitch)
				wide += boolInt(hasWide)
				// Every other method goes through the edited-method path (max_stack and
				// max_locals recomputed, tables re-encoded): with nothing actually changed it
				// must give the same bytes too.
				if methods%2 == 0 {
					b.MarkModified()
					forced++
				}
				out, err := b.Encode()
				if err != nil {
					failed++
					if failed < 5 {
						t.Errorf("encode: %v", err)
					}
					return
				}
				a, err := out.Encode(jm.raw.NameIndex)
				if err != nil {
					t.Fatalf("%s: %v", jm.info, err)
				}
				if !bytes.Equal(a.Data, jm.raw.Data) {
					failed++
					if failed < 5 {
						t.Errorf("%s: round trip differs (%d bytes, was %d)", jm.info, len(a.Data), len(jm.raw.Data))
					}
				}
			})
			if methods == 0 {
				t.Fatalf("no methods with code in %s", path)
			}
			t.Logf("%s: %d methods (%d through the edit path; %d with jsr, %d with switches, %d with wide), %d failed",
				jar, methods, forced, jsr, switches, wide, failed)
		})
	}
}

// TestMaxStackAgreement recomputes max_stack and max_locals of unedited javac-compiled
// methods: never below the compiler's (that would fail verification), and equal almost always.
func TestMaxStackAgreement(t *testing.T) {
	for _, jar := range realJars {
		t.Run(jar, func(t *testing.T) {
			path := needJar(t, jar)
			methods, sameStack, sameLocals := 0, 0, 0
			eachMethod(t, path, func(jm *jarMethod) {
				b, err := Decode(jm.code, jm.class.Pool, jm.info)
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				ms, ml, err := b.ComputeMax()
				if err != nil {
					t.Fatalf("%v", err)
				}
				methods++
				if ms == int(jm.code.MaxStack) {
					sameStack++
				} else if ms > int(jm.code.MaxStack) {
					t.Errorf("%s: computed max_stack %d above javac's %d", jm.info, ms, jm.code.MaxStack)
				}
				if ml == int(jm.code.MaxLocals) {
					sameLocals++
				}
			})
			t.Logf("%s: %d methods, max_stack equal %.2f%%, max_locals equal %.2f%%", jar, methods,
				100*float64(sameStack)/float64(methods), 100*float64(sameLocals)/float64(methods))
			if float64(sameStack) < 0.99*float64(methods) {
				t.Errorf("max_stack agrees with javac for only %d of %d methods", sameStack, methods)
			}
		})
	}
}
