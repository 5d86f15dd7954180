package ctormap

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/heapledger/heapledger/internal/testjars/testclasses"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/frames"
)

// TestRealJars analyses every method of real jars: every constructor must have its
// super()/this() call found on all paths with a single target (compiled code never does what
// appendix B does), every reached `new` must be paired with its constructor call, and the
// analysis must never fail on valid code.
func TestRealJars(t *testing.T) {
	jars := []string{"guava.jar", "ecj.jar", "commons-lang3.jar", "h2.jar", "xalan2.jar", "bcprov.jar", "byte-buddy.jar"}
	for _, jar := range jars {
		t.Run(jar, func(t *testing.T) {
			var ctors, prologue, news, methods, old int
			testclasses.Each(t, jar, func(entry string, c *classfile.Class) {
				if c.Major < 50 {
					old++
				}
				for _, m := range c.Methods {
					b, err := DecodeMethod(c, m)
					if err != nil {
						t.Fatal(err)
					}
					if b == nil {
						continue
					}
					methods++
					a, err := Analyze(b)
					if err != nil {
						t.Fatalf("%v", err)
					}
					for _, n := range a.News {
						if len(n.Inits) != 1 {
							t.Errorf("%s: new %s at offset %d has %d constructor calls", b.Method, n.Class, n.New.Offset, len(n.Inits))
						}
					}
					news += len(a.News)
					if !a.IsConstructor {
						continue
					}
					ctors++
					if len(a.Targets) != 1 || a.Warning != "" {
						t.Errorf("%s: targets %v, warning %q", b.Method, a.Targets, a.Warning)
						continue
					}
					for n := b.First(); n != nil; n = n.Next() {
						if a.Reached(n) && !a.ThisInitialized(n) && (code.IsBranch(n.Op) || n.Switch != nil) {
							prologue++
							break
						}
					}
				}
			})
			t.Logf("%s: %d methods (%d classes older than version 50), %d constructors each with one super()/this() target, %d with branches before it, %d new sites paired", jar, methods, old, ctors, prologue, news)
		})
	}
}

// TestWithoutNewAsTheDataFlow checks initCallsWithoutNew against the data flow it stands in
// for, on every method without a `new` of real jars (old class files with jsr among them) and
// of the hand-made constructors in testdata: the same super()/this() calls in the same order,
// and the same unreached instructions.
func TestWithoutNewAsTheDataFlow(t *testing.T) {
	compared := 0
	check := func(where string, c *classfile.Class) {
		for _, m := range c.Methods {
			b, err := DecodeMethod(c, m)
			if err != nil || b == nil {
				continue
			}
			hasNew := false
			for n := b.First(); n != nil; n = n.Next() {
				hasNew = hasNew || n.Op == code.NEW
			}
			if hasNew {
				continue
			}
			fast := &Analysis{IsConstructor: b.Method.Name == "<init>" && b.Method.Access&classfile.AccStatic == 0 && b.Method.Class != "java/lang/Object"}
			slow := &Analysis{IsConstructor: fast.IsConstructor}
			if err := slow.follow(b); err != nil {
				continue // what the data flow refuses is not compared
			}
			if err := fast.initCallsWithoutNew(b); err != nil {
				t.Fatalf("%s: %s: %v", where, b.Method, err)
			}
			compared++
			if len(fast.Calls) != len(slow.Calls) {
				t.Fatalf("%s: %s: %d calls without the data flow, %d with it", where, b.Method, len(fast.Calls), len(slow.Calls))
			}
			for i := range fast.Calls {
				if fast.Calls[i].Insn != slow.Calls[i].Insn || fast.Calls[i].Target != slow.Calls[i].Target {
					t.Fatalf("%s: %s: call %d differs: %v against %v", where, b.Method, i, fast.Calls[i].Target, slow.Calls[i].Target)
				}
			}
			if len(fast.unreached) != len(slow.unreached) {
				t.Fatalf("%s: %s: %d unreached instructions without the data flow, %d with it", where, b.Method, len(fast.unreached), len(slow.unreached))
			}
			for n := range slow.unreached {
				if !fast.unreached[n] {
					t.Fatalf("%s: %s: offset %d unreached only by the data flow", where, b.Method, n.Offset)
				}
			}
		}
	}
	for _, jar := range []string{"ecj.jar", "h2.jar", "xalan2.jar", "groovy-all.jar"} {
		testclasses.Each(t, jar, func(entry string, c *classfile.Class) { check(jar+" "+entry, c) })
	}
	// The hand-assembled constructors: different targets on different paths, branches and
	// handlers before super(), chains of this().
	dir := jasminClasses(t)
	classes, _ := filepath.Glob(filepath.Join(dir, "*.class"))
	for _, path := range classes {
		check(filepath.Base(path), loadClass(t, path))
	}
	if compared == 0 {
		t.Fatal("no method compared")
	}
	t.Logf("%d methods without new compared", compared)
}

// TestOnePassAsInference checks the one pass over the compiler's frames (frames.VisitReached)
// against inference (frames.Infer) on every method of real jars: the same super()/this()
// calls, `new`s, constructor pairings, allocations and unreached code, in the same order,
// whichever path follow takes (a method the one pass refuses is inferred both times).
func TestOnePassAsInference(t *testing.T) {
	compared, onePass := 0, 0
	for _, jar := range []string{"ecj.jar", "h2.jar", "guava.jar", "groovy-all.jar", "clojure-1.11.jar"} {
		testclasses.Each(t, jar, func(entry string, c *classfile.Class) {
			for _, m := range c.Methods {
				inferred, _, err := analyzeMethod(c, m, false)
				if err != nil || inferred == "" {
					continue
				}
				checked, ok, err := analyzeMethod(c, m, true)
				if err != nil {
					t.Fatalf("%s %s: with frames: %v", jar, entry, err)
				}
				if checked != inferred {
					t.Fatalf("%s %s: with frames:\n%s\ninferred:\n%s", jar, entry, checked, inferred)
				}
				compared++
				if ok {
					onePass++
				}
			}
		})
	}
	if onePass == 0 || onePass == compared {
		t.Fatalf("%d of %d methods were checked in one pass: both paths must be compared", onePass, compared)
	}
	t.Logf("%d methods compared, %d of them checked in one pass", compared, onePass)
}

// analyzeMethod analyses one method, with its compiler frames attached or not, and describes
// the result by offsets ("" for a method without code).
// With frames it also says whether the one pass took them.
func analyzeMethod(c *classfile.Class, m *classfile.Member, withFrames bool) (desc string, onePass bool, err error) {
	b, err := DecodeMethod(c, m)
	if err != nil || b == nil {
		return "", false, err
	}
	if withFrames {
		fm, err := frames.Attach(b)
		if err != nil {
			return "", false, err
		}
		onePass = fm.VisitReached(func(*code.Insn, *frames.Frame) error { return nil }) == nil
	}
	a, err := Analyze(b)
	if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("%s\n", b.Method) + pairings(b, a), onePass, nil
}
