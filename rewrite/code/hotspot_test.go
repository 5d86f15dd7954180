package code

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/rewrite/classfile"
)

// widenSrc exercises every kind of branch the encoder remaps: loop back edges, conditionals,
// a tableswitch and a lookupswitch, a try/catch range and long/double arithmetic.
const widenSrc = `public class Widen {
    static int work(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            switch (i % 4) { case 0: s += i; break; case 1: s -= 1; break; case 2: s ^= i; break; default: s += 7; }
            if (s > 1000) s = s % 97;
            switch (i * 1000) { case 0: s++; break; case 5000: s += 3; break; case 90000: s--; break; }
            try {
                if (i == 3) throw new IllegalStateException("x" + i);
            } catch (IllegalStateException e) {
                s += e.getMessage().length();
            }
        }
        long l = s;
        double d = l * 1.5;
        return (int) d + (n > 5 ? 1 : 2);
    }
    public static void main(String[] a) {
        int[] ns = {0, 1, 3, 5, 10, 100, 1000};
        for (int k = 0; k < ns.length; k++) System.out.println(work(ns[k]));
    }
}
`

// oldClass is a javac-compiled class rewritten as class file version 49, which needs no
// StackMapTable: tests of this package alone run edited code on HotSpot's type-inference
// verifier, while frames for edited code are package frames' job.
type oldClass struct {
	t         *testing.T
	java, dir string
	name      string
	want      []byte // output of the original program
	orig      []byte // the class file javac wrote
	class     *classfile.Class
}

// reset starts again from the class javac wrote.
func (o *oldClass) reset() {
	c, err := classfile.Parse(o.orig)
	if err != nil {
		o.t.Fatal(err)
	}
	o.class = c
}

// compileOld compiles one Java source with javac --release 8 (no invokedynamic for string
// concatenation or lambdas in the sources used here) and runs it once for the expected output.
func compileOld(t *testing.T, name, src string) *oldClass {
	t.Helper()
	javac, java := fixtures.Tool(t, "javac"), fixtures.Tool(t, "java")
	dir := t.TempDir()
	path := filepath.Join(dir, name+".java")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(dir, "orig")
	if out, err := exec.Command(javac, "--release", "8", "-d", orig, path).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	want, err := exec.Command(java, "-cp", orig, name).CombinedOutput()
	if err != nil {
		t.Fatalf("original %s: %v\n%s", name, err, want)
	}
	data, err := os.ReadFile(filepath.Join(orig, name+".class"))
	if err != nil {
		t.Fatal(err)
	}
	o := &oldClass{t: t, java: java, dir: dir, name: name, want: want, orig: data}
	o.reset()
	return o
}

// edit decodes method name+desc, applies f and encodes it back into the class. It returns the
// encoded code, or the error of Encode without changing the class.
func (o *oldClass) edit(name, desc string, f func(b *Body)) (*classfile.Code, error) {
	t := o.t
	t.Helper()
	c := o.class
	m := c.Method(name, desc)
	if m == nil {
		t.Fatalf("%s has no method %s%s", o.name, name, desc)
	}
	code, attr, err := c.MethodCode(m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Decode(code, c.Pool, Method{Class: o.name, Name: name, Desc: desc, Access: m.AccessFlags, Major: 49})
	if err != nil {
		t.Fatal(err)
	}
	var kept []*Attr
	for _, a := range b.Attrs {
		if a.Kind != AttrStackMap {
			kept = append(kept, a)
		}
	}
	b.Attrs = kept
	f(b)
	nc, err := b.Encode()
	if err != nil {
		return nil, err
	}
	replaceCode(t, m, attr, nc)
	return nc, nil
}

// replaceCode puts the encoded code in place of the method's Code attribute.
func replaceCode(t *testing.T, m *classfile.Member, attr *classfile.Attribute, nc *classfile.Code) {
	t.Helper()
	na, err := nc.Encode(attr.NameIndex)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range m.Attributes {
		if a == attr {
			m.Attributes[i] = na
			return
		}
	}
	t.Fatal("Code attribute not found")
}

// run writes the class as version 49 (the other methods' StackMapTables are ignored by that
// verifier) and runs it under -Xverify:all; the output must equal the original's.
func (o *oldClass) run() {
	t := o.t
	t.Helper()
	o.class.Major, o.class.Minor = 49, 0
	out, err := o.class.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	rw := filepath.Join(o.dir, "rw")
	if err := os.MkdirAll(rw, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rw, o.name+".class"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(o.java, "-Xverify:all", "-cp", rw, o.name).CombinedOutput()
	if err != nil || !bytes.Equal(got, o.want) {
		t.Fatalf("rewritten %s: %v\n%s\nwant\n%s", o.name, err, got, o.want)
	}
}

// TestWidenedCodeRunsOnHotSpot pads javac-compiled code with tens of kilobytes of nops at
// several places so that branches of every kind must widen, then lets HotSpot verify and run it.
func TestWidenedCodeRunsOnHotSpot(t *testing.T) {
	o := compileOld(t, "Widen", widenSrc)
	for _, spread := range []int{1, 3, 7} {
		o.reset()
		nc, err := o.edit("work", "(I)I", func(b *Body) {
			var insns []*Insn
			for n := b.First(); n != nil; n = n.Next() {
				if !n.IsLabel() {
					insns = append(insns, n)
				}
			}
			// 60000 bytes of nops spread over the method; the odd sizes move switch padding
			// through every alignment.
			for k := 1; k <= spread; k++ {
				b.InsertBefore(insns[k*len(insns)/(spread+1)], nops(b, 60000/spread+k))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(nc.Bytecode, []byte{byte(GOTO_W)}) {
			t.Fatalf("spread %d: nothing widened", spread)
		}
		o.run()
	}
}

// TestGeneratedFixturesOnHotSpot uses the generated WideLoop fixture: four bytes after every
// newarray (what an allocation probe adds) must widen both loop branches. (The 65535-byte
// boundary that BigMethod is about is tested on synthetic code in TestTooLarge, without the
// cost of compiling a 64 KB method.)
func TestGeneratedFixturesOnHotSpot(t *testing.T) {
	for _, g := range fixtures.Generated() {
		if g.Main != "WideLoop" {
			continue
		}
		o := compileOld(t, g.Main, g.Source)
		if string(o.want) != g.Expected {
			t.Fatalf("%s: original prints %q, fixture expects %q", g.Main, o.want, g.Expected)
		}
		switch g.Main {
		case "WideLoop":
			nc, err := o.edit("wide", "(II)I", func(b *Body) {
				for n := b.First(); n != nil; n = n.Next() {
					if n.Op == NEWARRAY {
						b.InsertAfter(n, b.Seq().Op(DUP).Op(POP).Op(DUP).Op(POP))
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			re, err := Decode(nc, o.class.Pool, testMethod)
			if err != nil {
				t.Fatal(err)
			}
			wide := 0
			for n := re.First(); n != nil; n = n.Next() {
				if n.Op == GOTO_W {
					wide++
				}
			}
			if wide != 2 {
				t.Errorf("WideLoop: %d goto_w, want 2 (loop exit and back edge)", wide)
			}
			o.run()
		}
	}
}

// TestJsrWideningRunsOnHotSpot pushes every subroutine of the jasmin jsr/ret fixture more than
// 32 KB away from its callers, so each jsr becomes jsr_w (and branches around it widen), and
// runs the program under the type-inference verifier with its expected output.
func TestJsrWideningRunsOnHotSpot(t *testing.T) {
	jasmin, java := fixtures.Tool(t, "jasmin"), fixtures.Tool(t, "java")
	set, err := fixtures.BuildJasmin(jasmin, java, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var prog *fixtures.Program
	for i := range set.Programs {
		if set.Programs[i].Main == "JsrRet" {
			prog = &set.Programs[i]
		}
	}
	if prog == nil {
		t.Fatal("fixture JsrRet is missing")
	}
	path := filepath.Join(set.ClassDir, "JsrRet.class")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := classfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	widened := 0
	for _, m := range c.Methods {
		code, attr, err := c.MethodCode(m)
		if err != nil {
			t.Fatal(err)
		}
		if code == nil {
			continue
		}
		b, err := Decode(code, c.Pool, Method{Class: c.Name(), Name: m.Name(c.Pool), Desc: m.Descriptor(c.Pool), Access: m.AccessFlags, Major: c.Major})
		if err != nil {
			t.Fatal(err)
		}
		// Pad before the first subroutine in code order (before its label, so callers must
		// jump over the padding); one 33 KB pad per method keeps it under 64 KB.
		var first *Insn
		for n := b.First(); n != nil && first == nil; n = n.Next() {
			if n.IsLabel() {
				for x := b.First(); x != nil; x = x.Next() {
					if x.Op == JSR && x.Target == n.Label {
						first = n
					}
				}
			}
		}
		if first == nil {
			continue
		}
		b.InsertBefore(first, nops(b, 33000))
		nc, err := b.Encode()
		if err != nil {
			t.Fatal(err)
		}
		re, err := Decode(nc, c.Pool, b.Method)
		if err != nil {
			t.Fatal(err)
		}
		for n := re.First(); n != nil; n = n.Next() {
			if n.Op == JSR_W {
				widened++
			}
		}
		replaceCode(t, m, attr, nc)
	}
	if widened == 0 {
		t.Fatal("no jsr was widened")
	}
	out, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := set.Run("JsrRet", []string{set.ClassDir})
	if err != nil || got != prog.Expected {
		t.Fatalf("after widening %d jsr: %v\n%s\nwant\n%s", widened, err, got, prog.Expected)
	}
	t.Logf("%d jsr widened to jsr_w; output unchanged", widened)
}
