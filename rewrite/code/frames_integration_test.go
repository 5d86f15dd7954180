package code_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/frames"
)

// framesSrc needs frames at the places widening touches: loop heads, switch targets, handler
// starts, and a join with an uninitialized object on the stack (new StringBuilder(c ? a : b)),
// whose uninitialized(offset) must follow the `new` when padding moves it.
const framesSrc = `public class Frames {
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

// TestWideningWithFrames is the whole engine on a Java 17 class: nops spread through a method
// force widening (new branch targets after each goto_w), package frames re-encodes the
// StackMapTable through the FrameEncoder hook, and HotSpot's split verifier must accept it.
func TestWideningWithFrames(t *testing.T) {
	javac, java := fixtures.Tool(t, "javac"), fixtures.Tool(t, "java")
	dir := t.TempDir()
	src := filepath.Join(dir, "Frames.java")
	if err := os.WriteFile(src, []byte(framesSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(dir, "orig")
	if out, err := exec.Command(javac, "--release", "17", "-d", orig, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	want, err := exec.Command(java, "-cp", orig, "Frames").CombinedOutput()
	if err != nil {
		t.Fatalf("original: %v\n%s", err, want)
	}
	data, err := os.ReadFile(filepath.Join(orig, "Frames.class"))
	if err != nil {
		t.Fatal(err)
	}
	for _, spread := range []int{1, 2, 5} {
		c, err := classfile.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		m := c.Method("work", "(I)I")
		cd, attr, err := c.MethodCode(m)
		if err != nil {
			t.Fatal(err)
		}
		b, err := code.Decode(cd, c.Pool, code.Method{Class: "Frames", Name: "work", Desc: "(I)I", Access: m.AccessFlags, Major: c.Major})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := frames.Attach(b); err != nil {
			t.Fatal(err)
		}
		var insns []*code.Insn
		for n := b.First(); n != nil; n = n.Next() {
			if !n.IsLabel() {
				insns = append(insns, n)
			}
		}
		for k := 1; k <= spread; k++ {
			s := b.Seq()
			for i := 0; i < 60000/spread+k; i++ {
				s.Op(code.NOP)
			}
			b.InsertBefore(insns[k*len(insns)/(spread+1)], s)
		}
		// Move the new whose uninitialized(offset) the frames carry, and pad between it and
		// the join where that frame is.
		var sbNew *code.Insn
		for _, n := range insns {
			if name, _ := c.Pool.ClassName(n.Index); n.Op == code.NEW && name == "java/lang/StringBuilder" {
				sbNew = n
			}
		}
		if sbNew == nil {
			t.Fatal("no new StringBuilder in the compiled method")
		}
		b.InsertBefore(sbNew, b.Seq().Op(code.NOP).Op(code.NOP).Op(code.NOP))
		b.InsertAfter(sbNew, b.Seq().Op(code.NOP))
		nc, err := b.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if sbNew.Pos() == sbNew.Offset {
			t.Fatalf("the new at %d did not move", sbNew.Offset)
		}
		if !bytes.Contains(nc.Bytecode, []byte{byte(code.GOTO_W)}) {
			t.Fatalf("spread %d: nothing widened", spread)
		}
		na, err := nc.Encode(attr.NameIndex)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range m.Attributes {
			if a == attr {
				m.Attributes[i] = na
			}
		}
		out, err := c.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		rw := filepath.Join(dir, "rw")
		if err := os.MkdirAll(rw, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rw, "Frames.class"), out, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := exec.Command(java, "-Xverify:all", "-cp", rw, "Frames").CombinedOutput()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("spread %d: rewritten class: %v\n%s\nwant\n%s", spread, err, got, want)
		}
	}
}
