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

// needTool finds a JDK tool, skipping outside CI when it is missing.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI: %v", name, err)
		}
		t.Skipf("%s not found; install a JDK (scripts/install-deps.sh)", name)
	}
	return p
}

// TestWidenedCodeRunsOnHotSpot pads javac-compiled code with tens of kilobytes of nops at
// several places so that branches of every kind must widen, then lets HotSpot verify and run
// it. The class is written as version 49, which needs no StackMapTable, so the test covers
// this package alone; frames for widened code are package frames' job.
func TestWidenedCodeRunsOnHotSpot(t *testing.T) {
	javac, java := needTool(t, "javac"), needTool(t, "java")
	dir := t.TempDir()
	src := filepath.Join(dir, "Widen.java")
	if err := os.WriteFile(src, []byte(widenSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(dir, "orig")
	if out, err := exec.Command(javac, "--release", "8", "-d", orig, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	want, err := exec.Command(java, "-cp", orig, "Widen").CombinedOutput()
	if err != nil {
		t.Fatalf("original: %v\n%s", err, want)
	}
	data, err := os.ReadFile(filepath.Join(orig, "Widen.class"))
	if err != nil {
		t.Fatal(err)
	}
	for _, spread := range []int{1, 3, 7} {
		c, err := classfile.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		m := c.Method("work", "(I)I")
		code, attr, err := c.MethodCode(m)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Decode(code, c.Pool, Method{Class: "Widen", Name: "work", Desc: "(I)I", Access: m.AccessFlags, Major: 49})
		if err != nil {
			t.Fatal(err)
		}
		// Version 49 has no frames; drop the table instead of maintaining it.
		var kept []*Attr
		for _, a := range b.Attrs {
			if a.Kind != AttrStackMap {
				kept = append(kept, a)
			}
		}
		b.Attrs = kept
		var insns []*Insn
		for n := b.First(); n != nil; n = n.Next() {
			if !n.IsLabel() {
				insns = append(insns, n)
			}
		}
		// spread insertion points, each padding the code with some nops, 60000 bytes total;
		// the odd sizes move switch padding through every alignment.
		for k := 1; k <= spread; k++ {
			at := insns[k*len(insns)/(spread+1)]
			b.InsertBefore(at, nops(b, 60000/spread+k))
		}
		nc, err := b.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(nc.Bytecode, []byte{byte(GOTO_W)}) {
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
		c.Major, c.Minor = 49, 0
		// The other methods keep their StackMapTables: version 49 verifiers ignore them.
		out, err := c.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		rw := filepath.Join(dir, "rw")
		os.MkdirAll(rw, 0o755)
		if err := os.WriteFile(filepath.Join(rw, "Widen.class"), out, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := exec.Command(java, "-Xverify:all", "-Xshare:off", "-cp", rw, "Widen").CombinedOutput()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("spread %d: rewritten class: %v\n%s\nwant\n%s", spread, err, got, want)
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
		na, err := nc.Encode(attr.NameIndex)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range m.Attributes {
			if a == attr {
				m.Attributes[i] = na
			}
		}
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
