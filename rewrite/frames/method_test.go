package frames

import (
	"fmt"
	"testing"

	"github.com/heapledger/heapledger/internal/testjars/testclasses"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// decodeMethod decodes one method of a parsed class into a body with frames attached.
func decodeMethod(t *testing.T, c *classfile.Class, m *classfile.Member) (*code.Body, *Method, *classfile.Code) {
	t.Helper()
	cd, _, err := c.MethodCode(m)
	if err != nil {
		t.Fatalf("%s.%s: %v", c.Name(), m.String(c.Pool), err)
	}
	if cd == nil {
		return nil, nil, nil
	}
	meth := methodOf(c, m)
	b, err := code.Decode(cd, c.Pool, meth)
	if err != nil {
		t.Fatalf("%s: %v", meth, err)
	}
	fm, err := Attach(b)
	if err != nil {
		t.Fatalf("%s: attach: %v", meth, err)
	}
	return b, fm, cd
}

// shifted returns the frames of a table with every offset (frame positions and the `new` of
// uninitialized types) moved by d.
func shifted(es []Entry, d int) []Entry {
	out := make([]Entry, len(es))
	for i, e := range es {
		f := e.Frame.Clone()
		for _, ts := range [][]Type{f.Locals, f.Stack} {
			for j := range ts {
				if ts[j].Kind == Uninitialized {
					ts[j].New += d
				}
			}
		}
		out[i] = Entry{e.Offset + d, f}
	}
	return out
}

func tableOf(t *testing.T, c *classfile.Class, cd *classfile.Code, initial Frame) []Entry {
	t.Helper()
	a := classfile.FindAttribute(cd.Attributes, "StackMapTable", c.Pool)
	if a == nil {
		return nil
	}
	es, err := Decode(a.Data, c.Pool, initial, Limits{CodeLength: len(cd.Bytecode), MaxLocals: int(cd.MaxLocals), MaxStack: int(cd.MaxStack)})
	if err != nil {
		t.Fatalf("%s: %v", c.Name(), err)
	}
	return es
}

// TestRealJarShift puts a nop in front of every method of real jars and checks that the frames
// written for the edited code are the compiler's frames, each one byte further on, with every
// uninitialized(offset) following its `new`; and that the analysis of every method (the state
// before every instruction, replayed from the frames) succeeds.
func TestRealJarShift(t *testing.T) {
	for _, jar := range []string{"guava.jar", "ecj.jar", "h2.jar", "byte-buddy.jar"} {
		t.Run(jar, func(t *testing.T) {
			var methods, frames, insns int
			testclasses.Each(t, jar, func(entry string, c *classfile.Class) {
				if c.Major < 50 {
					return
				}
				for _, m := range c.Methods {
					b, fm, cd := decodeMethod(t, c, m)
					if b == nil {
						continue
					}
					an, err := fm.Analyze()
					if err != nil {
						t.Fatalf("analyze: %v", err)
					}
					if err := an.Walk(func(in *code.Insn, before *Frame) error { insns++; return nil }); err != nil {
						t.Fatalf("walk: %v", err)
					}
					old := tableOf(t, c, cd, fm.Initial())
					if cf := fm.CompilerFrames(); len(cf) != len(old) || (len(cf) > 0 && cf[0].Label.Offset != old[0].Offset) {
						t.Fatalf("%s: %d compiler frames, table has %d", b.Method, len(cf), len(old))
					}
					b.InsertAfter(nil, b.Seq().Op(code.NOP))
					out, err := b.Encode()
					if err != nil {
						t.Fatalf("encode: %v", err)
					}
					methods++
					frames += len(old)
					if len(out.Bytecode) != len(cd.Bytecode)+1 {
						continue // a branch was widened: frames were added, checked by verification elsewhere
					}
					got := tableOf(t, c, out, fm.Initial())
					want := shifted(old, 1)
					if err := sameEntries(got, want); err != nil {
						t.Fatalf("%s: %v", b.Method, err)
					}
				}
			})
			t.Logf("%s: %d methods, %d frames moved, %d instructions analysed", jar, methods, frames, insns)
		})
	}
}

func sameEntries(got, want []Entry) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d frames, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Offset != want[i].Offset || !got[i].Frame.Equal(want[i].Frame) {
			return fmt.Errorf("frame %d: got %d %v, want %d %v", i, got[i].Offset, got[i].Frame, want[i].Offset, want[i].Frame)
		}
	}
	return nil
}

// TestConcurrentEncode edits methods of one jar from several goroutines at once, as the jar
// pipeline does: pooled engines must not leak state from one method into another. Every result
// must equal the one computed alone (run with -race to check the sharing itself).
func TestConcurrentEncode(t *testing.T) {
	jobs := jarMethods(t, "commons-lang3.jar", false)
	want := make([][]byte, len(jobs))
	for i, j := range jobs {
		var err error
		if want[i], err = j.encodeFrames(); err != nil {
			t.Fatalf("%s: %v", j.m, err)
		}
	}
	const workers = 4
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			for i := w; i < len(jobs); i += workers {
				got, err := jobs[i].encodeFrames()
				if err != nil || string(got) != string(want[i]) {
					errs <- fmt.Errorf("%s: concurrent result differs (%v)", jobs[i].m, err)
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
