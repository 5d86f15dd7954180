package passes

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/frames"
)

// The probe writes frames from the compiler's without a data flow; the general data flow of
// package frames must arrive at the same StackMapTables for every method of the fixtures and of
// a real jar. A frame the shortcut got wrong would differ here even where HotSpot happened not
// to load the class.
func TestProbeFramesMatchDataFlow(t *testing.T) {
	classes := map[string][]byte{}
	for _, set := range []*fixtures.Set{set17(t), set25(t)} {
		err := filepath.Walk(set.ClassDir, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(p, ".class") {
				return err
			}
			data, err := os.ReadFile(p)
			classes[set.Name+"/"+filepath.Base(p)] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range jarClasses(t, "commons-lang3.jar") {
		classes[c.name] = c.data
	}
	fast := Probe()
	flow := &driver{name: "probe", ed: probeEditor{dataFlow: true}}
	same := 0
	for name, data := range classes {
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
