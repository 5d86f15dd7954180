package code_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/frames"
)

// widenSrc exercises every kind of branch the encoder remaps: loop back edges, conditionals,
// a tableswitch and a lookupswitch, a try/catch range, long/double arithmetic, and a join with
// an uninitialized object on the stack (new StringBuilder(c ? a : b)), whose
// uninitialized(offset) in the frames must follow the `new` when code moves it.
const widenSrc = `public class Widen {
    static int work(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            switch (i % 4) { case 0: s += i; break; case 1: s -= 1; break; case 2: s ^= i; break; default: s += 7; }
            if (s > 1000) s = s % 97;
            s += new StringBuilder(i > 2 ? "abc" : "d").length();
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

// javaClass is one javac-compiled class, edited and run on HotSpot.
type javaClass struct {
	t         *testing.T
	java, dir string
	name      string
	want      []byte // output of the original program
	orig      []byte // the class file javac wrote
	class     *classfile.Class
}

// compile compiles one Java source with javac --release release and runs it once for the
// expected output.
func compile(t *testing.T, name, src, release string) *javaClass {
	t.Helper()
	javac, java := testenv.Tool(t, "javac"), testenv.Tool(t, "java")
	dir := t.TempDir()
	path := filepath.Join(dir, name+".java")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(dir, "orig")
	if out, err := exec.Command(javac, "--release", release, "-d", orig, path).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	want, err := javaRun(java, "-cp", orig, name)
	if err != nil {
		t.Fatalf("original %s: %v\n%s", name, err, want)
	}
	data, err := os.ReadFile(filepath.Join(orig, name+".class"))
	if err != nil {
		t.Fatal(err)
	}
	o := &javaClass{t: t, java: java, dir: dir, name: name, want: want, orig: data}
	o.reset()
	return o
}

// reset starts again from the class javac wrote.
func (o *javaClass) reset() {
	c, err := classfile.Parse(o.orig)
	if err != nil {
		o.t.Fatal(err)
	}
	o.class = c
}

// edit decodes method name+desc, applies f and encodes it back into the class. With withFrames
// package frames maintains the StackMapTable; without, the table is dropped and the class must
// be run as version 49 (old), which needs none: that covers this package alone on HotSpot's
// type-inference verifier.
func (o *javaClass) edit(name, desc string, withFrames bool, f func(b *code.Body)) *classfile.Code {
	t := o.t
	t.Helper()
	c := o.class
	m := c.Method(name, desc)
	if m == nil {
		t.Fatalf("%s has no method %s%s", o.name, name, desc)
	}
	cd, attr, err := c.MethodCode(m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := code.Decode(cd, c.Pool, code.Method{Class: o.name, Name: name, Desc: desc, Access: m.AccessFlags, Major: c.Major})
	if err != nil {
		t.Fatal(err)
	}
	if withFrames {
		if _, err := frames.Attach(b); err != nil {
			t.Fatal(err)
		}
	} else {
		var kept []*code.Attr
		for _, a := range b.Attrs {
			if a.Kind != code.AttrStackMap {
				kept = append(kept, a)
			}
		}
		b.Attrs = kept
	}
	f(b)
	nc, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	replaceCode(t, m, attr, nc)
	return nc
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

// run writes the class (as version 49 when old) and runs it under -Xverify:all; the output
// must equal the original's. Version 49 verifiers ignore the other methods' StackMapTables.
func (o *javaClass) run(old bool) {
	t := o.t
	t.Helper()
	if old {
		o.class.Major, o.class.Minor = 49, 0
	}
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
	got, err := javaRun(o.java, "-Xverify:all", "-cp", rw, o.name)
	if err != nil || !bytes.Equal(got, o.want) {
		t.Fatalf("rewritten %s: %v\n%s\nwant\n%s", o.name, err, got, o.want)
	}
}

// javaRun runs a JVM with a generous deadline: broken branch offsets can turn a program into
// an endless loop, which must fail the test rather than hang the suite.
func javaRun(java string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, java, args...).CombinedOutput()
	if ctx.Err() != nil {
		return out, fmt.Errorf("java %v did not finish in 3 minutes: %v", args, ctx.Err())
	}
	return out, err
}

// padding is a sequence of n nops.
func padding(b *code.Body, n int) *code.Seq {
	s := b.Seq()
	for i := 0; i < n; i++ {
		s.Op(code.NOP)
	}
	return s
}

// spreadPadding puts about 60000 bytes of nops at spread places of the method; the odd sizes
// move switch padding through every alignment. It also pads around the `new StringBuilder`,
// so that the uninitialized(offset) its frames carry must move.
func spreadPadding(t *testing.T, b *code.Body, spread int) {
	var insns []*code.Insn
	var sbNew *code.Insn
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			continue
		}
		insns = append(insns, n)
		if name, _ := b.Pool.ClassName(n.Index); n.Op == code.NEW && name == "java/lang/StringBuilder" && sbNew == nil {
			sbNew = n
		}
	}
	if sbNew == nil {
		t.Fatal("no new StringBuilder in the compiled method")
	}
	for k := 1; k <= spread; k++ {
		b.InsertBefore(insns[k*len(insns)/(spread+1)], padding(b, 60000/spread+k))
	}
	b.InsertBefore(sbNew, padding(b, 3))
	b.InsertAfter(sbNew, padding(b, 1))
}

// TestWidenedCodeRunsOnHotSpot pads javac-compiled code with tens of kilobytes of nops at
// several places so that branches of every kind must widen, then lets HotSpot verify and run
// it: as version 49 without frames (this package alone), and as Java 17 with package frames
// re-encoding the StackMapTable through the FrameEncoder hook (the whole engine, including the
// new branch targets that widened conditionals create).
func TestWidenedCodeRunsOnHotSpot(t *testing.T) {
	for _, withFrames := range []bool{false, true} {
		release := "8"
		if withFrames {
			release = "17"
		}
		o := compile(t, "Widen", widenSrc, release)
		for _, spread := range []int{1, 3, 7} {
			o.reset()
			nc := o.edit("work", "(I)I", withFrames, func(b *code.Body) { spreadPadding(t, b, spread) })
			if !bytes.Contains(nc.Bytecode, []byte{byte(code.GOTO_W)}) {
				t.Fatalf("spread %d: nothing widened", spread)
			}
			o.run(!withFrames)
		}
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
		o := compile(t, g.Main, g.Source, "8")
		if string(o.want) != g.Expected {
			t.Fatalf("%s: original prints %q, fixture expects %q", g.Main, o.want, g.Expected)
		}
		nc := o.edit("wide", "(II)I", false, func(b *code.Body) {
			for n := b.First(); n != nil; n = n.Next() {
				if n.Op == code.NEWARRAY {
					b.InsertAfter(n, b.Seq().Op(code.DUP).Op(code.POP).Op(code.DUP).Op(code.POP))
				}
			}
		})
		if n := countOps(t, o.class.Pool, nc, code.GOTO_W); n != 2 {
			t.Errorf("WideLoop: %d goto_w, want 2 (loop exit and back edge)", n)
		}
		o.run(true)
	}
}

// countOps decodes c again and counts the instructions with opcode op.
func countOps(t *testing.T, pool *classfile.Pool, c *classfile.Code, op code.Opcode) int {
	t.Helper()
	b, err := code.Decode(c, pool, code.Method{Class: "T", Name: "m", Desc: "()V", Access: classfile.AccStatic})
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op == op {
			k++
		}
	}
	return k
}

// TestJsrWideningRunsOnHotSpot pushes a subroutine of each method of the jasmin jsr/ret fixture
// more than 32 KB away from its callers, so those jsr become jsr_w (and branches around them
// widen), and runs the program under the type-inference verifier with its expected output.
func TestJsrWideningRunsOnHotSpot(t *testing.T) {
	jasmin, java := testenv.Tool(t, "jasmin"), testenv.Tool(t, "java")
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
		cd, attr, err := c.MethodCode(m)
		if err != nil {
			t.Fatal(err)
		}
		if cd == nil {
			continue
		}
		b, err := code.Decode(cd, c.Pool, code.Method{Class: c.Name(), Name: m.Name(c.Pool), Desc: m.Descriptor(c.Pool), Access: m.AccessFlags, Major: c.Major})
		if err != nil {
			t.Fatal(err)
		}
		// Pad before the first subroutine in code order (before its label, so callers must
		// jump over the padding); one 33 KB pad per method keeps it under 64 KB.
		var first *code.Insn
		for n := b.First(); n != nil && first == nil; n = n.Next() {
			if n.IsLabel() {
				for x := b.First(); x != nil; x = x.Next() {
					if x.Op == code.JSR && x.Target == n.Label {
						first = n
					}
				}
			}
		}
		if first == nil {
			continue
		}
		b.InsertBefore(first, padding(b, 33000))
		nc, err := b.Encode()
		if err != nil {
			t.Fatal(err)
		}
		widened += countOps(t, c.Pool, nc, code.JSR_W)
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
