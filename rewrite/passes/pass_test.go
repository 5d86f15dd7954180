package passes

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/commons"
	"github.com/heapledger/heapledger/rewrite/frames"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// synth builds a small class in memory: a public class with one static method run()V whose code
// allocates an Object and returns. padding adds Utf8 constants, to bring the pool near its limit.
func synth(t *testing.T, name string, major uint16, access uint16, padding int) []byte {
	t.Helper()
	p := &classfile.Pool{Entries: []classfile.Constant{{}}}
	must := func(i uint16, err error) uint16 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	this := must(p.AddClass(name))
	super := must(p.AddClass("java/lang/Object"))
	obj := must(p.AddClass("java/lang/Object"))
	ctor := must(p.AddMethodref("java/lang/Object", "<init>", "()V", false))
	codeName := must(p.AddUtf8("Code"))
	c := &classfile.Class{Major: major, Pool: p, AccessFlags: access, ThisClass: this, SuperClass: super}
	if access&classfile.AccModule == 0 {
		// new Object; dup; invokespecial Object.<init>; pop; return
		bc := []byte{0xbb, byte(obj >> 8), byte(obj), 0x59, 0xb7, byte(ctor >> 8), byte(ctor), 0x57, 0xb1}
		code := &classfile.Code{MaxStack: 2, MaxLocals: 0, Bytecode: bc}
		attr, err := code.Encode(codeName)
		if err != nil {
			t.Fatal(err)
		}
		c.Methods = []*classfile.Member{{
			AccessFlags:     classfile.AccPublic | classfile.AccStatic,
			NameIndex:       must(p.AddUtf8("run")),
			DescriptorIndex: must(p.AddUtf8("()V")),
			Attributes:      []*classfile.Attribute{attr},
		}}
	}
	for i := 0; i < padding; i++ {
		must(p.AddUtf8("pad" + strconv.Itoa(i)))
	}
	data, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestProbeInstrumentsSynthesizedClass(t *testing.T) {
	in := synth(t, "demo/Synth", 49, classfile.AccPublic|classfile.AccSuper, 0)
	res, err := Probe().TransformClass("demo/Synth.class", in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Data == nil || len(res.Skipped) != 0 || len(res.Warnings) != 0 {
		t.Fatalf("probe result: changed=%v skipped=%v warnings=%v", res.Changed(), res.Skipped, res.Warnings)
	}
	cf, err := classfile.Parse(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	m := cf.Methods[0]
	c, _, err := cf.MethodCode(m)
	if err != nil {
		t.Fatal(err)
	}
	calls := probeCalls(t, cf, m, c)
	want := map[string]int{"enter": 1, "exit": 1, "unwind": 1, "alloc": 1}
	for k, v := range want {
		if calls[k] != v {
			t.Errorf("%s called %d times, want %d (all calls: %v)", k, calls[k], v, calls)
		}
	}
	if len(c.Exceptions) != 1 || c.Exceptions[0].CatchType != 0 {
		t.Errorf("exception table %v, want one catch-all handler", c.Exceptions)
	}
	id, err := Identity().TransformClass("demo/Synth.class", in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(id.Data, in) {
		t.Errorf("identity changed a class it should reproduce byte for byte")
	}
}

func TestUntouchableClasses(t *testing.T) {
	for _, tc := range []struct {
		name, class string
		access      uint16
		reason      string
	}{
		{"module-info", "module-info", classfile.AccModule, "module-info"},
		{"package-info", "demo/package-info", classfile.AccInterface | classfile.AccAbstract, "package-info"},
		{"own runtime", "heapledger/probe/Probe", classfile.AccPublic, "runtime"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := synth(t, tc.class, 53, tc.access, 0)
			for _, p := range []transform.Class{Probe(), Identity()} {
				res, err := p.TransformClass(tc.class, in)
				if err != nil {
					t.Fatal(err)
				}
				if res.Data != nil || len(res.Skipped) != 1 || res.Skipped[0].Method != "" || !strings.Contains(res.Skipped[0].Reason(), tc.reason) {
					t.Errorf("result changed=%v skipped=%v, want the whole class left alone for %q", res.Changed(), res.Skipped, tc.reason)
				}
			}
		})
	}
}

// A class that went through count or probe once is left as it was the second time: rewritten
// again it counted each allocation twice, and under the agent with IDs of a table the agent
// does not know. identity still re-encodes it.
func TestRewrittenClassesAreNotRewrittenAgain(t *testing.T) {
	in := synth(t, "demo/Twice", 52, classfile.AccPublic|classfile.AccSuper, 0)
	count := func() transform.Class {
		set, err := accounts.Parse("demo")
		if err != nil {
			t.Fatal(err)
		}
		p, err := Count(CountOptions{Accounts: set, Table: accounts.NewTable(set)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pass func() transform.Class
		mark string
	}{{"count", count, AcctClass}, {"probe", Probe, ProbeClass}} {
		t.Run(tc.name, func(t *testing.T) {
			once, err := tc.pass().TransformClass("demo/Twice", in)
			if err != nil || once.Data == nil || len(once.Skipped) != 0 {
				t.Fatalf("first rewrite: changed=%v skipped=%v err=%v", once.Changed(), once.Skipped, err)
			}
			for _, p := range []transform.Class{count(), Probe()} {
				again, err := p.TransformClass("demo/Twice", once.Data)
				if err != nil {
					t.Fatal(err)
				}
				if again.Data != nil || len(again.Skipped) != 1 || again.Skipped[0].Method != "" ||
					again.Skipped[0].Reason() != transform.RewrittenBefore+": it calls "+tc.mark {
					t.Errorf("rewritten again: changed=%v skipped=%v, want the class left alone", again.Changed(), again.Skipped)
				}
			}
			if id, err := Identity().TransformClass("demo/Twice", once.Data); err != nil || !bytes.Equal(id.Data, once.Data) {
				t.Errorf("identity on a rewritten class: skipped=%v err=%v, want the same bytes", id.Skipped, err)
			}
		})
	}
	// Constants alone mark nothing: HotSpot keeps a rewritten version's constants in a class
	// that a detach restored, and hands them back when the class is retransformed again.
	cf, err := classfile.Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cf.Pool.AddMethodref(AcctClass, "object", "(L"+AcctClass+";I)V", false); err != nil {
		t.Fatal(err)
	}
	stale, err := cf.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if res, err := count().TransformClass("demo/Twice", stale); err != nil || res.Data == nil || len(res.Skipped) != 0 {
		t.Errorf("a class that only names Acct in its pool: changed=%v skipped=%v err=%v, want it rewritten", res.Changed(), res.Skipped, err)
	}
}

func TestNewerVersionPassesThroughWithWarning(t *testing.T) {
	in := synth(t, "demo/Future", classfile.MaxMajor+1, classfile.AccPublic, 0)
	res, err := Probe().TransformClass("demo/Future.class", in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Data != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "demo/Future.class") {
		t.Errorf("result changed=%v warnings=%v, want unchanged with one warning naming the class", res.Changed(), res.Warnings)
	}
}

func TestMalformedClassIsAnError(t *testing.T) {
	in := synth(t, "demo/Broken", 52, classfile.AccPublic, 0)
	_, err := Probe().TransformClass("demo/Broken.class", in[:len(in)/2])
	if err == nil || !strings.Contains(err.Error(), "demo/Broken.class") {
		t.Errorf("truncated class: error %v, want one naming the class", err)
	}
}

// A pool with no room for the runtime's constants leaves the class as it was, every method
// reported with the reason, and nothing fails.
func TestPoolOverflowSkipsMethods(t *testing.T) {
	in := synth(t, "demo/Full", 49, classfile.AccPublic, 65535-12)
	res, err := Probe().TransformClass("demo/Full.class", in)
	if err != nil {
		t.Fatal(err)
	}
	want := transform.Skip{Method: "run()V", Code: transform.SkipPoolFull}
	if res.Data != nil || len(res.Skipped) != 1 || res.Skipped[0] != want {
		t.Errorf("result changed=%v skipped=%v, want unchanged and %v", res.Changed(), res.Skipped, want)
	}
}

// The probe's constants are found, not added again, in a class that already has them, and the
// ones it adds are exactly what the pool's own Add functions would have made.
func TestPoolRefsReuseExistingConstants(t *testing.T) {
	once, err := Probe().TransformClass("demo/Synth", synth(t, "demo/Synth", 52, classfile.AccPublic, 0))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := classfile.Parse(once.Data)
	if err != nil {
		t.Fatal(err)
	}
	before := cf.Pool.Len()
	var pr poolRefs
	idx, err := pr.resolve(cf.Pool, []memberRef{{ProbeClass, "exit", "(I)V"}, {ProbeClass, "enter", "()I"}}, "java/lang/Throwable")
	if err != nil {
		t.Fatal(err)
	}
	if cf.Pool.Len() != before {
		t.Errorf("pool grew from %d to %d entries for constants it already had", before, cf.Pool.Len())
	}
	for i, want := range []struct{ name, desc string }{{"exit", "(I)V"}, {"enter", "()I"}} {
		owner, name, desc, err := cf.Pool.MemberRef(idx[i])
		if err != nil || owner != ProbeClass || name != want.name || desc != want.desc {
			t.Errorf("index %d is %s.%s%s (%v), want %s.%s%s", idx[i], owner, name, desc, err, ProbeClass, want.name, want.desc)
		}
		if again, _ := cf.Pool.AddMethodref(ProbeClass, want.name, want.desc, false); again != idx[i] {
			t.Errorf("the pool's own de-duplication finds %s at %d, poolRefs at %d", want.name, again, idx[i])
		}
	}
	if name, err := cf.Pool.ClassName(idx[2]); err != nil || name != "java/lang/Throwable" {
		t.Errorf("class index %d is %q (%v)", idx[2], name, err)
	}
}

// TestSkipCodes: a method's skip takes its code from the error's chain when the chain says
// more than the step that failed, and the detail keeps the error, with its method and offset.
func TestSkipCodes(t *testing.T) {
	m := code.Method{Class: "a/B", Name: "run", Desc: "()V"}
	for _, tc := range []struct {
		err  error
		want transform.SkipCode
	}{
		{m.Errorf(-1, "%w", &code.TooLargeError{Size: 70000}), transform.SkipTooLarge},
		{m.Errorf(3, "ldc: %w", classfile.ErrPoolOverflow), transform.SkipPoolFull},
		{m.Errorf(-1, "%w: %w", frames.ErrNoFrames, errors.New("x meets y")), transform.SkipNoFrames},
		{m.Errorf(-1, "%w", commons.ErrNoInitCall), transform.SkipNoInitCall},
		{m.Errorf(7, "something else"), transform.SkipInstrument},
	} {
		s := skipOf("run()V", transform.SkipInstrument, fmt.Errorf("outer: %w", tc.err))
		if s.Code != tc.want {
			t.Errorf("%v: code %q, want %q", tc.err, s.Code, tc.want)
		}
		if s.Detail != "" && !strings.Contains(s.Detail, "of method a/B.run()V") && !strings.Contains(s.Detail, "in method a/B.run()V") {
			t.Errorf("%v: detail %q does not name the method", tc.err, s.Detail)
		}
	}
}
