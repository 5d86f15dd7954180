package frames

import (
	"bytes"
	"testing"

	"github.com/heapledger/heapledger/internal/testjars/testclasses"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// realJars are Debian jars built by javac (and ecj, for ecj itself), read by the round-trip and
// interpreter tests.
var realJars = []string{"guava.jar", "ecj.jar", "commons-lang3.jar", "jackson-databind.jar", "h2.jar", "byte-buddy.jar", "bcprov.jar", "icu4j.jar", "asm.jar", "sunflow.jar", "batik-all.jar", "lucene-core-4.10.4.jar", "xalan2.jar"}

// jarMethod is a method of a real jar with its code, as the jar pipeline hands it to an edit.
type jarMethod struct {
	c  *classfile.Class
	cd *classfile.Code
	m  code.Method
}

// methodOf describes a parsed method for code.Decode.
func methodOf(c *classfile.Class, m *classfile.Member) code.Method {
	return code.Method{Class: c.Name(), Name: m.Name(c.Pool), Desc: m.Descriptor(c.Pool), Access: m.AccessFlags, Major: c.Major}
}

// jarMethods lists the methods of a Debian jar that have code (and, with withFrames, a
// StackMapTable); a missing jar skips or fails as eachClass does.
func jarMethods(t *testing.T, jar string, withFrames bool) []jarMethod {
	var ms []jarMethod
	testclasses.Each(t, jar, func(_ string, c *classfile.Class) {
		for _, m := range c.Methods {
			cd, _, err := c.MethodCode(m)
			if err != nil || cd == nil || withFrames && classfile.FindAttribute(cd.Attributes, "StackMapTable", c.Pool) == nil {
				continue
			}
			ms = append(ms, jarMethod{c, cd, methodOf(c, m)})
		}
	})
	return ms
}

// encodeFrames is the frame work of an edit: decode the code, attach the compiler's frames and
// write the table of the (unchanged) code.
func (x jarMethod) encodeFrames() ([]byte, error) {
	body, err := code.Decode(x.cd, x.c.Pool, x.m)
	if err != nil {
		return nil, err
	}
	fm, err := Attach(body)
	if err != nil {
		return nil, err
	}
	return fm.EncodeFrames(body)
}

// methodFrames returns the StackMapTable of a method and its implicit frame, or ok=false when it
// has none.
func methodFrames(t *testing.T, c *classfile.Class, m *classfile.Member) (code *classfile.Code, smt []byte, initial Frame, ok bool) {
	code, _, err := c.MethodCode(m)
	if err != nil {
		t.Fatalf("%s.%s: %v", c.Name(), m.String(c.Pool), err)
	}
	if code == nil {
		return nil, nil, Frame{}, false
	}
	a := classfile.FindAttribute(code.Attributes, "StackMapTable", c.Pool)
	if a == nil {
		return code, nil, Frame{}, false
	}
	initial, err = Initial(c.Name(), m.Name(c.Pool), m.Descriptor(c.Pool), m.AccessFlags)
	if err != nil {
		t.Fatalf("%s.%s: %v", c.Name(), m.String(c.Pool), err)
	}
	return code, a.Data, initial, true
}

// TestRealJarRoundTrip decodes and re-encodes every StackMapTable of real jars. The compact
// writer makes the choices javac makes, so nearly every table comes back byte for byte; the
// rest must be other encodings of the very same frames.
func TestRealJarRoundTrip(t *testing.T) {
	for _, jar := range realJars {
		t.Run(jar, func(t *testing.T) {
			var tables, identical, frames int
			testclasses.Each(t, jar, func(entry string, c *classfile.Class) {
				for _, m := range c.Methods {
					code, smt, initial, ok := methodFrames(t, c, m)
					if !ok {
						continue
					}
					where := c.Name() + "." + m.String(c.Pool)
					lim := Limits{CodeLength: len(code.Bytecode), MaxLocals: int(code.MaxLocals), MaxStack: int(code.MaxStack)}
					entries, err := Decode(smt, c.Pool, initial, lim)
					if err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					tables++
					frames += len(entries)
					out, err := Encode(entries, initial, c.Pool)
					if err != nil {
						t.Fatalf("%s: encode: %v", where, err)
					}
					if bytes.Equal(out, smt) {
						identical++
						continue
					}
					again, err := Decode(out, c.Pool, initial, lim)
					if err != nil {
						t.Fatalf("%s: re-encoded table does not decode: %v", where, err)
					}
					if len(again) != len(entries) {
						t.Fatalf("%s: %d frames became %d", where, len(entries), len(again))
					}
					for i := range again {
						if again[i].Offset != entries[i].Offset || !again[i].Frame.Equal(entries[i].Frame) {
							t.Fatalf("%s: frame %d changed: %d %v became %d %v", where, i, entries[i].Offset, entries[i].Frame, again[i].Offset, again[i].Frame)
						}
					}
					t.Logf("%s: equivalent encoding\n  class file % x\n  ours       % x", where, smt, out)
					if len(out) > len(smt) {
						t.Errorf("%s: re-encoding grew the table from %d to %d bytes", where, len(smt), len(out))
					}
				}
			})
			if tables == 0 {
				t.Fatalf("%s: no StackMapTable found", jar)
			}
			t.Logf("%s: %d tables, %d frames, %d byte-identical (%.2f%%), the rest equivalent", jar, tables, frames, identical, 100*float64(identical)/float64(tables))
		})
	}
}
