package code

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/testjars"

	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/classfile"
)

// realJars are Debian jars whose every method must survive decode→encode unchanged.
var realJars = []string{"guava.jar", "eclipse-ecj.jar", "icu4j.jar", "h2.jar", "bcprov.jar", "commons-lang3.jar", "xalan2.jar",
	"lucene-queryparser-4.10.4.jar"} // javacc output has lookupswitch without pairs

// needJar returns the path of a Debian jar, skipping outside CI when it is missing.
func needJar(t testing.TB, name string) string { return testjars.Path(t, name) }

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
	testjars.Each(t, path, func(entry string, data []byte) {
		if !testjars.IsModuleInfo(entry) {
			classMethods(t, entry, data, f)
		}
	})
}

// classMethods calls f for every method with code of one class file.
func classMethods(t testing.TB, name string, data []byte, f func(jm *jarMethod)) {
	t.Helper()
	c, err := classfile.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, m := range c.Methods {
		code, raw, err := c.MethodCode(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if code == nil {
			continue
		}
		f(&jarMethod{class: c, m: m, code: code, raw: raw, info: Method{
			Class: c.Name(), Name: m.Name(c.Pool), Desc: m.Descriptor(c.Pool), Access: m.AccessFlags, Major: c.Major}})
	}
}

// roundTrip decodes and encodes one method, through the edited-method path (max_stack and
// max_locals recomputed, tables re-encoded) when force is set. With nothing actually changed,
// both paths must give back the same bytes.
func roundTrip(jm *jarMethod, force bool) error {
	b, err := Decode(jm.code, jm.class.Pool, jm.info)
	if err != nil {
		return err
	}
	if force {
		b.MarkModified()
	}
	out, err := b.Encode()
	if err != nil {
		return err
	}
	a, err := out.Encode(jm.raw.NameIndex)
	if err != nil {
		return err
	}
	if !bytes.Equal(a.Data, jm.raw.Data) {
		return fmt.Errorf("%s: round trip differs (%d bytes, was %d)", jm.info, len(a.Data), len(jm.raw.Data))
	}
	return nil
}

// TestRoundTripJDK25 round-trips java.util of the Java 25 JDK (class file version 69), taken
// out of its runtime image with jimage.
func TestRoundTripJDK25(t *testing.T) {
	jimage := testenv.Tool(t, filepath.Join(fixtures.JDK25Home(), "bin", "jimage"))
	dir := t.TempDir()
	modules := filepath.Join(fixtures.JDK25Home(), "lib", "modules")
	if out, err := exec.Command(jimage, "extract", "--include", "regex:/java.base/java/util/.*", "--dir", dir, modules).CombinedOutput(); err != nil {
		t.Fatalf("jimage: %v\n%s", err, out)
	}
	methods, major := 0, 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".class") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		classMethods(t, path, data, func(jm *jarMethod) {
			methods++
			major = max(major, int(jm.class.Major))
			if err := roundTrip(jm, methods%2 == 0); err != nil {
				t.Error(err)
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if methods < 1000 || major < 69 {
		t.Fatalf("only %d methods, highest class file version %d: not the Java 25 java.util", methods, major)
	}
	t.Logf("%d methods of class file version %d round-tripped", methods, major)
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
				force := methods%2 == 0
				forced += boolInt(force)
				if err := roundTrip(jm, force); err != nil {
					failed++
					if failed < 5 {
						t.Error(err)
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
