package passes

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/frames"
)

// The probe describes its edits (frames.Known) and gets frames without a data flow; the data flow of
// package frames must arrive at the same StackMapTables for every method of the fixtures and of
// a real jar. A frame the shortcut got wrong would differ here even where HotSpot happened not
// to load the class.
func TestProbeFramesMatchDataFlow(t *testing.T) {
	classes := append(fixtureClasses(t), jarClasses(t, "commons-lang3.jar")...)
	fast := Probe()
	flow := &driver{name: "probe", ed: probeEditor{dataFlow: true}}
	same := 0
	for _, c := range classes {
		name, data := c.name, c.data
		a, err := fast.TransformClass(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := flow.TransformClass(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(a.Skipped) != len(b.Skipped) {
			t.Errorf("%s: skipped %v with the probe's frames, %v with the data flow", name, a.Skipped, b.Skipped)
			continue
		}
		if bytes.Equal(a.Data, b.Data) {
			same++
			continue
		}
		compareFrames(t, name, a.Data, b.Data)
	}
	t.Logf("%d of %d classes byte-identical, the rest equal but for the handler's frame", same, len(classes))
	if same == len(classes) {
		t.Error("every class is the same with the data flow: are the probe's frames described (frames.Known)?")
	}
}

// compareFrames checks two rewritten versions of a class that differ only in their frames: the
// code must be the same and every frame the same, except the handler's at the end of the code,
// where the data flow writes the join of the covered code's locals and the probe writes Top for
// all but the token; both verify, since every type is assignable to Top.
func compareFrames(t *testing.T, name string, fast, flow []byte) {
	t.Helper()
	ca, cb := parseClass(t, fast), parseClass(t, flow)
	for i, m := range ca.Methods {
		id := name + " " + m.Name(ca.Pool) + m.Descriptor(ca.Pool)
		codeA, _, err := ca.MethodCode(m)
		if err != nil {
			t.Fatal(err)
		}
		codeB, _, err := cb.MethodCode(cb.Methods[i])
		if err != nil {
			t.Fatal(err)
		}
		if codeA == nil {
			continue
		}
		if !bytes.Equal(codeA.Bytecode, codeB.Bytecode) {
			t.Errorf("%s: code differs", id)
			continue
		}
		ea, eb := methodFrames(t, ca, m, codeA), methodFrames(t, cb, cb.Methods[i], codeB)
		if sameFrames(ea, eb) {
			continue // a method both left alone, or whose frames came from the data flow in both
		}
		if len(ea) != len(eb) || len(ea) == 0 {
			t.Errorf("%s: %d frames with the probe's writer, %d with the data flow", id, len(ea), len(eb))
			continue
		}
		last := len(ea) - 1
		for k := 0; k < last; k++ {
			if ea[k].Offset != eb[k].Offset || !ea[k].Frame.Equal(eb[k].Frame) {
				t.Errorf("%s: frame %d: probe %d %v, data flow %d %v", id, k, ea[k].Offset, ea[k].Frame, eb[k].Offset, eb[k].Frame)
			}
		}
		h := ea[last].Frame
		for slot, ty := range h.Locals {
			if ty.Kind != frames.Top && slot != len(h.Locals)-1 {
				t.Errorf("%s: handler frame %v has a local other than the token", id, h)
			}
		}
		if ea[last].Offset != eb[last].Offset || len(h.Stack) != 1 || !h.Stack[0].Equal(eb[last].Frame.Stack[0]) {
			t.Errorf("%s: handler frame probe %d %v, data flow %d %v", id, ea[last].Offset, h, eb[last].Offset, eb[last].Frame)
		}
	}
}

func sameFrames(a, b []frames.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Offset != b[i].Offset || !a[i].Frame.Equal(b[i].Frame) {
			return false
		}
	}
	return true
}

func methodFrames(t *testing.T, cf *classfile.Class, m *classfile.Member, c *classfile.Code) []frames.Entry {
	t.Helper()
	a := classfile.FindAttribute(c.Attributes, "StackMapTable", cf.Pool)
	if a == nil {
		return nil
	}
	init, err := frames.Initial(cf.Name(), m.Name(cf.Pool), m.Descriptor(cf.Pool), m.AccessFlags)
	if err != nil {
		t.Fatal(err)
	}
	es, err := frames.Decode(a.Data, cf.Pool, init, frames.Limits{CodeLength: len(c.Bytecode), MaxLocals: int(c.MaxLocals), MaxStack: int(c.MaxStack)})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// The count pass writes the frames of a method it edited without path counters from the
// compiler's and its edits (knownFrames). Against the general data flow on every method of the
// fixtures and two real jars, with package accounts (methods switch and get a handler), with
// every class accounted, with the Object.<init> hook's charges, counted switches and calling contexts, the
// code must be the same and the frames the same but where the shortcut's are wider and still
// verify: Top for the handler's locals and the copies of a multianewarray's dimensions, the
// state typed Acct where the data flow saw only null. Where it is narrower — an added local
// typed in a compiler frame of dead code, which the data flow leaves unreached — it is counted.
func TestCountFramesMatchDataFlow(t *testing.T) {
	// The fixtures are in the unnamed package, which only "*" accounts.
	classes := append(fixtureClasses(t), jarClasses(t, "commons-lang3.jar")...)
	classes = append(classes, jarClasses(t, "h2.jar")...)
	patterns := "org.apache.commons.lang3.*,org.h2.*"
	for _, c := range []struct {
		patterns                       string
		objectInit, switches, contexts bool
	}{
		{patterns, false, false, false},
		{"*", false, false, false},
		{"*", true, false, false},
		{patterns, false, true, false},
		{patterns, false, false, true},
		{"*", false, false, true},
	} {
		set, err := accounts.Parse(c.patterns)
		if err != nil {
			t.Fatal(err)
		}
		mk := func(dataFlow bool) *CountPass {
			p, err := Count(CountOptions{Accounts: set, Table: accounts.NewTable(set), ObjectInit: c.objectInit, CountSwitches: c.switches, Contexts: c.contexts})
			if err != nil {
				t.Fatal(err)
			}
			p.ed.dataFlow = dataFlow
			return p
		}
		fast, flow := mk(false), mk(true)
		var st frameStats
		for _, cl := range classes {
			a, errA := fast.TransformClass(cl.name, cl.data)
			b, errB := flow.TransformClass(cl.name, cl.data)
			if (errA == nil) != (errB == nil) || len(a.Skipped) != len(b.Skipped) {
				t.Errorf("%s: errors %v / %v, skipped %v with the shortcut, %v with the data flow", cl.name, errA, errB, a.Skipped, b.Skipped)
				continue
			}
			if a.Data == nil || bytes.Equal(a.Data, b.Data) {
				st.same++
				continue
			}
			compareCountFrames(t, cl, a.Data, b.Data, &st)
		}
		t.Logf("accounts %q object-init %v switches %v contexts %v: %d classes the same, %d frames differ as allowed, %d locals typed in dead code",
			c.patterns, c.objectInit, c.switches, c.contexts, st.same, st.wider, st.dead)
		if st.wider == 0 {
			t.Errorf("accounts %q: no frame written by the shortcut differs from the data flow's: is it in use?", c.patterns)
		}
	}
}

type frameStats struct{ same, wider, dead int }

// compareCountFrames checks the frames of two rewrites of a class that may differ only there
// (see TestCountFramesMatchDataFlow).
func compareCountFrames(t *testing.T, in namedClass, fast, flow []byte, st *frameStats) {
	t.Helper()
	orig := parseClass(t, in.data)
	origLocals := map[string]int{}
	for _, m := range orig.Methods {
		if c, _, err := orig.MethodCode(m); err == nil && c != nil {
			origLocals[m.Name(orig.Pool)+m.Descriptor(orig.Pool)] = int(c.MaxLocals)
		}
	}
	ca, cb := parseClass(t, fast), parseClass(t, flow)
	for i, m := range ca.Methods {
		id := in.name + "." + m.Name(ca.Pool) + m.Descriptor(ca.Pool)
		codeA, _, err := ca.MethodCode(m)
		if err != nil || codeA == nil {
			continue
		}
		codeB, _, err := cb.MethodCode(cb.Methods[i])
		if err != nil {
			t.Fatal(err)
		}
		// The data flow may add a class constant the shortcut's frames do not need (a type
		// the handler's join keeps), which moves the constants added after it.
		textA, ordA := codeText(t, ca, m, codeA)
		textB, ordB := codeText(t, cb, cb.Methods[i], codeB)
		if textA != textB || codeA.MaxLocals != codeB.MaxLocals {
			t.Errorf("%s: code differs", id)
			continue
		}
		ea, eb := methodFrames(t, ca, m, codeA), methodFrames(t, cb, cb.Methods[i], codeB)
		if len(ea) != len(eb) {
			t.Errorf("%s: %d frames with the shortcut, %d with the data flow", id, len(ea), len(eb))
			continue
		}
		added := origLocals[m.Name(ca.Pool)+m.Descriptor(ca.Pool)]
		for k := range ea {
			fa, fb := ea[k].Frame, eb[k].Frame
			handler := k == len(ea)-1 && len(fa.Stack) == 1 && fa.Stack[0].Class == "java/lang/Throwable"
			if ordA[ea[k].Offset] != ordB[eb[k].Offset] || !(frames.Frame{Stack: fa.Stack}).Equal(frames.Frame{Stack: fb.Stack}) {
				t.Errorf("%s: frame %d: shortcut %d %v, data flow %d %v", id, k, ea[k].Offset, fa, eb[k].Offset, fb)
				continue
			}
			if diff := compareLocals(fa.Locals, fb.Locals, added, handler, st); diff != "" {
				t.Errorf("%s: frame %d at %d: %s: shortcut %v, data flow %v", id, k, ea[k].Offset, diff, fa, fb)
			}
		}
	}
}

// compareLocals says what is wrong with the shortcut's locals a against the data flow's b, ""
// when they are the same or differ as allowed.
func compareLocals(a, b []frames.Type, added int, handler bool, st *frameStats) string {
	differs := false
	for i := 0; i < max(len(a), len(b)); i++ {
		ta, tb := frames.TopType, frames.TopType
		if i < len(a) {
			ta = a[i]
		}
		if i < len(b) {
			tb = b[i]
		}
		switch {
		case ta.Equal(tb):
			continue
		case ta.Kind == frames.Top && (handler || i >= added):
		case ta.Kind == frames.Object && ta.Class == AcctClass && tb.Kind == frames.Null && i >= added:
		case tb.Kind == frames.Top && i >= added:
			st.dead++
		default:
			return "local " + strconv.Itoa(i)
		}
		differs = true
	}
	if differs {
		st.wider++
	}
	return ""
}

// parseClass parses a class file the test made.
func parseClass(t *testing.T, data []byte) *classfile.Class {
	t.Helper()
	cf, err := classfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

// codeText is a method's instructions with their constants written out: code the same but for
// where its constants are in the pool has the same text. It also returns the place in the list
// of the instruction at each offset.
func codeText(t *testing.T, cf *classfile.Class, m *classfile.Member, c *classfile.Code) (string, map[int]int) {
	t.Helper()
	b, err := code.Decode(c, cf.Pool, code.Method{Class: cf.Name(), Name: m.Name(cf.Pool), Desc: m.Descriptor(cf.Pool), Access: m.AccessFlags, Major: cf.Major})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	// Instructions by their position in the list, ldc_w as ldc: a constant moved past index
	// 255 widens an ldc and moves the offsets after it.
	at := map[*code.Label]int{}
	ord := map[int]int{}
	k := 0
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			at[n.Label] = k
		} else {
			ord[n.Offset] = k
			k++
		}
	}
	var sb strings.Builder
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			continue
		}
		op := n.Op
		if op == code.LDC_W {
			op = code.LDC
		}
		fmt.Fprintf(&sb, "%d %d %d", op, n.Var, n.Int)
		if n.Index != 0 {
			sb.WriteString(" " + constText(cf.Pool, n.Index))
		}
		if n.Target != nil {
			fmt.Fprintf(&sb, " ->%d", at[n.Target])
		}
		sb.WriteByte('\n')
	}
	return sb.String(), ord
}

// constText writes out pool constant i and the constants it refers to.
func constText(p *classfile.Pool, i uint16) string {
	if int(i) >= len(p.Entries) {
		return "?"
	}
	e := p.Entries[i]
	switch e.Tag {
	case classfile.TagClass, classfile.TagString, classfile.TagMethodType:
		return fmt.Sprintf("%d(%s)", e.Tag, constText(p, e.A))
	case classfile.TagFieldref, classfile.TagMethodref, classfile.TagInterfaceMethodref, classfile.TagNameAndType:
		return fmt.Sprintf("%d(%s,%s)", e.Tag, constText(p, e.A), constText(p, e.B))
	case classfile.TagMethodHandle, classfile.TagDynamic, classfile.TagInvokeDynamic:
		return fmt.Sprintf("%d(%d,%s)", e.Tag, e.A, constText(p, e.B))
	}
	return fmt.Sprintf("%d(%x)", e.Tag, e.Bytes)
}

// fixtureClasses reads the class files of the Java 17 and Java 25 fixtures, named by their
// internal names.
func fixtureClasses(t *testing.T) []namedClass {
	t.Helper()
	var out []namedClass
	for _, set := range []*fixtures.Set{set17(t), set25(t)} {
		err := filepath.Walk(set.ClassDir, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(p, ".class") {
				return err
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(set.ClassDir, p)
			out = append(out, namedClass{strings.TrimSuffix(filepath.ToSlash(rel), ".class"), data})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
