package frames_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/ctormap"
	"github.com/heapledger/heapledger/rewrite/frames"
)

// stress edits a method so that its frames need everything package frames does: a new int
// local assigned at entry and live everywhere after; a branch inside the inserted entry code
// with a value on the stack; after every `new`, a branch whose target has the uninitialized
// object on the stack (and, when the `new` moved, its new offset); a use of the local before
// every return; and a catch-all handler over every stretch where `this` is initialized, whose
// frame is derived from the whole body. The edit changes nothing the program can observe.
func stress(b *code.Body, an *ctormap.Analysis) error {
	runs := an.Coverable(b)
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op == code.NEW {
			after := b.NewLabel()
			s := b.Seq().Op(code.ICONST_1).Jump(code.IFNE, after).Op(code.NOP).Mark(after)
			if err := s.Err(); err != nil {
				return err
			}
			b.InsertAfter(n, s)
		}
	}
	t := b.NewLocal(1)
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op >= code.IRETURN && n.Op <= code.RETURN {
			b.InsertBefore(n, b.Seq().Load(code.ILOAD, t).Op(code.POP))
		}
	}
	pos := b.NewLabel()
	entry := b.Seq().InvokeStatic("java/lang/System", "nanoTime", "()J").Op(code.L2I).
		Op(code.DUP).Jump(code.IFGE, pos).Op(code.INEG).Mark(pos).Store(code.ISTORE, t)
	if err := entry.Err(); err != nil {
		return err
	}
	b.InsertAfter(nil, entry)
	if len(runs) == 0 {
		return nil
	}
	handler := b.NewLabel()
	for _, r := range runs {
		from, to := b.NewLabel(), b.NewLabel()
		b.InsertBefore(r[0], b.Seq().Mark(from))
		b.InsertAfter(r[1], b.Seq().Mark(to))
		b.AddHandler(from, to, handler, 0)
	}
	tail := b.Seq().Mark(handler).Load(code.ILOAD, t).Op(code.POP).Op(code.ATHROW)
	if err := tail.Err(); err != nil {
		return err
	}
	b.Append(tail)
	return nil
}

// rewriteDir applies stress to every method of every class under dir, in place.
func rewriteDir(t *testing.T, dir string) (methods int) {
	t.Helper()
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || !strings.HasSuffix(path, ".class") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		c, err := classfile.Parse(data)
		if err != nil {
			return err
		}
		for _, m := range c.Methods {
			cd, attr, err := c.MethodCode(m)
			if err != nil {
				return err
			}
			if cd == nil {
				continue
			}
			b, err := code.Decode(cd, c.Pool, code.Method{Class: c.Name(), Name: m.Name(c.Pool), Desc: m.Descriptor(c.Pool), Access: m.AccessFlags, Major: c.Major})
			if err != nil {
				return err
			}
			if _, err := frames.Attach(b); err != nil {
				return err
			}
			an, err := ctormap.Analyze(b)
			if err != nil {
				return err
			}
			if err := stress(b, an); err != nil {
				return err
			}
			nc, err := b.Encode()
			if errors.Is(err, code.ErrCodeTooLarge) {
				continue
			}
			if err != nil {
				return err
			}
			na, err := nc.Encode(attr.NameIndex)
			if err != nil {
				return err
			}
			for i := range m.Attributes {
				if m.Attributes[i] == attr {
					m.Attributes[i] = na
				}
			}
			methods++
		}
		out, err := c.Bytes()
		if err != nil {
			return err
		}
		return os.WriteFile(path, out, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return methods
}

// TestDerivedFramesVerify rewrites the Java 17 and Java 25 fixtures with stress and runs every
// program under -Xverify:all: HotSpot's own type checker judges the frames, and the output must
// be unchanged.
func TestDerivedFramesVerify(t *testing.T) {
	type build func(javac, java, out string) (*fixtures.Set, error)
	sets := []struct {
		name        string
		javac, java string
		build       build
	}{
		{"java17", "javac", "java", fixtures.BuildJava17},
		{"java25", filepath.Join(fixtures.JDK25Home(), "bin", "javac"), filepath.Join(fixtures.JDK25Home(), "bin", "java"), fixtures.BuildJava25},
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			javac, java := testenv.Tool(t, s.javac), testenv.Tool(t, s.java)
			set, err := s.build(javac, java, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			n := rewriteDir(t, set.ClassDir)
			for _, p := range set.Programs {
				out, err := set.Run(p.Main, []string{set.ClassDir})
				if err != nil {
					t.Errorf("%v", err)
					continue
				}
				if out != p.Expected {
					t.Errorf("%s: output changed:\n%s\nwant\n%s", p.Main, out, p.Expected)
				}
			}
			t.Logf("%s: %d methods rewritten, %d programs verified and run", s.name, n, len(set.Programs))
		})
	}
}
