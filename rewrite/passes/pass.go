// Package passes holds the rewriting passes: count (memory accounts and allocation counts, the
// product), probe (calls to a tiny runtime, runtime-java/probe, at entry, exits and allocations:
// the worked example of a pass, docs/instrumentation.md), identity (decode and re-encode, which
// proves the engine) and the Object.<init> hook.
//
// All share one driver: parse the class, decode each method that has code, let the pass edit
// the body (through the commons layer, rewrite/commons, for advice around it), re-encode it with
// its frames, and keep any method that cannot be rewritten safely exactly as it was, listed in
// Result.Skipped with a code and the error. A pass value holds no mutable state, so one value
// serves every goroutine of the jar pipeline.
package passes

import (
	"errors"
	"fmt"
	"strings"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/commons"
	"github.com/heapledger/heapledger/rewrite/frames"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// RuntimePackages are the packages of heapledger's own Java code (runtime, probe, agent,
// verifier). Their classes are never instrumented: a probe calling itself would recurse, and
// the runtime's counts would count themselves. Only these packages: a user's own classes in
// some other heapledger.* package are rewritten like any others.
var RuntimePackages = []string{"heapledger/rt/", "heapledger/probe/", "heapledger/agent/", "heapledger/verify/"}

// IsRuntimeClass reports whether the internal class name is one of heapledger's own.
func IsRuntimeClass(internalName string) bool {
	for _, p := range RuntimePackages {
		if strings.HasPrefix(internalName, p) {
			return true
		}
	}
	return false
}

// methodEditor edits one decoded method. Returning an error keeps the method unmodified, with
// the error as the reason. prepareClass runs once per class before any method is edited and
// returns state shared by the class's methods (constants every method uses, for instance), so
// that the editor itself stays free of per-class state and safe for concurrent use; an error
// there keeps every method of the class unmodified, with that reason.
type methodEditor interface {
	prepareClass(c *classfile.Class) (any, error)
	editMethod(c *classfile.Class, m *classfile.Member, cm *commons.Method, state any) error
}

// classFinisher is implemented by editors that take something in the class's turn (the count
// pass reserves its allocation sites' IDs, transform.Turn), gather method by method what the
// class needs once all its methods are edited, and finish the class with it.
type classFinisher interface {
	// beginClass runs before any method is edited; it is the only step that may wait for the
	// turn, so that classes still run in parallel through everything after it.
	beginClass(c *classfile.Class, state any, turn *transform.Turn) error
	// methodKept says, after each method, whether its new code is kept, and returns the
	// fallback that code was made with (a transform.SkipCode.Fallback), or nil.
	methodKept(state any, kept bool) *transform.Skip
	// finishClass runs after the last method when any changed, before the class is written.
	finishClass(c *classfile.Class, state any) error
	// taken says which IDs beginClass took, and where finishClass (when it ran) put them.
	taken(state any) *transform.IDs
}

// rawFilter is implemented by an editor that can tell, before a method is decoded, that it
// leaves the method as it is (i is the method's index in the class).
type rawFilter interface {
	untouched(cf *classfile.Class, m *classfile.Member, i int, state any) bool
}

// driver runs a methodEditor over every method of a class.
type driver struct {
	name string
	ed   methodEditor
	// alwaysWrite makes the class be written even when no method changed, so that identity
	// really re-encodes every class it is given.
	alwaysWrite bool
}

// TransformClass implements transform.Class, for callers with no order of classes.
func (d *driver) TransformClass(name string, data []byte) (transform.Result, error) {
	return d.TransformClassInTurn(name, data, nil)
}

// TransformClassInTurn implements transform.Ordered.
func (d *driver) TransformClassInTurn(name string, data []byte, turn *transform.Turn) (transform.Result, error) {
	defer turn.Done()
	var res transform.Result
	cf, err := classfile.Parse(data)
	if err != nil {
		var uv *classfile.UnsupportedVersionError
		if errors.As(err, &uv) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %v; passed through unchanged", name, err))
			return res, nil
		}
		return res, fmt.Errorf("%s: %w", name, err)
	}
	cname := cf.Name()
	if code, skip := untouchable(cf, cname); skip {
		res.Skipped = append(res.Skipped, transform.Skip{Code: code})
		return res, nil
	}
	// Rewriting a rewritten class would count each of its allocations twice (and, under the
	// agent, with site IDs from a table it does not know). identity only re-encodes, which is
	// as safe on rewritten code as on any other.
	if !d.alwaysWrite {
		if mark := rewrittenBefore(cf); mark != "" {
			res.Skipped = append(res.Skipped, transform.Skip{Code: transform.SkipRewritten, Detail: "it calls " + mark})
			return res, nil
		}
	}
	state, err := d.ed.prepareClass(cf)
	if err != nil {
		for _, m := range cf.Methods {
			if m.AccessFlags&(classfile.AccAbstract|classfile.AccNative) == 0 {
				res.Skipped = append(res.Skipped, skipOf(m.Name(cf.Pool)+m.Descriptor(cf.Pool), transform.SkipRefused, err))
			}
		}
		return res, nil
	}
	changed := false
	fin, _ := d.ed.(classFinisher)
	if fin != nil {
		err := fin.beginClass(cf, state, turn)
		turn.Done()
		if err != nil {
			return transform.Result{}, code.Method{Class: cname}.Errorf(-1, "pass %s: %w", d.name, err)
		}
	}
	cm := &commons.Method{} // one for the class's methods in turn
	rf, _ := d.ed.(rawFilter)
	for i, m := range cf.Methods {
		if rf != nil && !d.alwaysWrite && rf.untouched(cf, m, i, state) {
			if fin != nil {
				fin.methodKept(state, false)
			}
			continue
		}
		ok, skip, err := d.method(cf, cname, m, cm, state)
		if err != nil {
			return transform.Result{}, err
		}
		if fin != nil {
			if fb := fin.methodKept(state, ok); fb != nil {
				res.Skipped = append(res.Skipped, *fb)
			}
		}
		if skip != nil {
			res.Skipped = append(res.Skipped, *skip)
		}
		changed = changed || ok
	}
	if !changed && !d.alwaysWrite {
		if fin != nil {
			res.IDs = fin.taken(state)
		}
		return res, nil
	}
	if fin != nil {
		if err := fin.finishClass(cf, state); err != nil {
			return transform.Result{}, code.Method{Class: cname}.Errorf(-1, "pass %s: %w", d.name, err)
		}
		res.IDs = fin.taken(state)
	}
	out, err := cf.Bytes()
	if err != nil {
		return transform.Result{}, code.Method{Class: cname}.Errorf(-1, "pass %s: %w", d.name, err)
	}
	res.Data = out
	return res, nil
}

// rewrittenMarks are runtime classes that only code heapledger rewrote refers to: the count
// pass's accounts and the probe. Ledger is not one: a program may call Ledger.snapshot itself.
var rewrittenMarks = []string{AcctClass, ProbeClass}

// rewrittenBefore returns the mark by which cf shows it was rewritten by heapledger, or "".
// Its code must use the mark: naming it in the pool is not enough, since HotSpot keeps the
// constants of a rewritten version in a class restored by a later retransformation (the agent's
// detach), and hands that pool back when the class is retransformed again. Only a class whose
// pool names a mark has its methods decoded here.
func rewrittenBefore(cf *classfile.Class) string {
	p := cf.Pool
	named := map[uint16]string{}
	for i := 1; i < len(p.Entries); i++ {
		if p.Entries[i].Tag != classfile.TagClass {
			continue
		}
		for _, m := range rewrittenMarks {
			if p.IsClassNamed(uint16(i), m) {
				named[uint16(i)] = m
			}
		}
	}
	if len(named) == 0 {
		return ""
	}
	cname := cf.Name()
	for _, m := range cf.Methods {
		c, _, err := cf.MethodCode(m)
		if err != nil || c == nil {
			continue
		}
		b, err := code.Decode(c, p, code.Method{Class: cname, Name: m.Name(p), Desc: m.Descriptor(p), Access: m.AccessFlags, Major: cf.Major})
		if err != nil {
			continue
		}
		mark := ""
		for n := b.First(); n != nil && mark == ""; n = n.Next() {
			switch n.Op {
			case code.INVOKESTATIC, code.INVOKEVIRTUAL, code.INVOKESPECIAL, code.GETFIELD, code.PUTFIELD, code.GETSTATIC, code.PUTSTATIC:
				if e, err := p.Entry(n.Index); err == nil {
					mark = named[e.A] // a member reference's A is its class
				}
			}
		}
		b.Release()
		if mark != "" {
			return mark
		}
	}
	return ""
}

// untouchable says whether a whole class must be left alone, and why.
func untouchable(cf *classfile.Class, cname string) (transform.SkipCode, bool) {
	switch {
	case cf.AccessFlags&classfile.AccModule != 0 || cname == "module-info" || strings.HasSuffix(cname, "/module-info"):
		return transform.SkipModuleInfo, true
	case cname == "package-info" || strings.HasSuffix(cname, "/package-info"):
		return transform.SkipPackageInfo, true
	case IsRuntimeClass(cname):
		return transform.SkipRuntime, true
	}
	return "", false
}

// method rewrites one method in place. It reports whether the method's Code attribute was
// replaced, or a Skip when the method was kept as it was. An error is returned only for damage
// to the class as a whole, which the caller cannot recover from by keeping one method.
func (d *driver) method(cf *classfile.Class, cname string, m *classfile.Member, cm *commons.Method, state any) (bool, *transform.Skip, error) {
	mname, mdesc := m.Name(cf.Pool), m.Descriptor(cf.Pool)
	// Each step has the reason its failures are reported under unless the error says better
	// (skipOf).
	skip := func(code transform.SkipCode, err error) (bool, *transform.Skip, error) {
		s := skipOf(mname+mdesc, code, err)
		return false, &s, nil
	}
	if m.AccessFlags&(classfile.AccAbstract|classfile.AccNative) != 0 {
		return false, nil, nil
	}
	c, attr, err := cf.MethodCode(m)
	if err != nil {
		return skip(transform.SkipUnreadableCode, err)
	}
	if c == nil {
		return false, nil, nil
	}
	meth := code.Method{Class: cname, Name: mname, Desc: mdesc, Access: m.AccessFlags, Major: cf.Major}
	b, err := code.Decode(c, cf.Pool, meth)
	if err != nil {
		return skip(transform.SkipUnreadableCode, err)
	}
	// Nothing of the body outlives this method (the new attribute is bytes), so its nodes go
	// to the next method decoded.
	defer b.Release()
	// The compiler's frames are keyed to labels before any edit, so they move with their code.
	// An editor whose edits change them in a known way describes them (frames.Known).
	if _, err := frames.Attach(b); err != nil {
		return skip(transform.SkipNoFrames, err)
	}
	cm.Reset(b)
	if err := d.ed.editMethod(cf, m, cm, state); err != nil {
		return skip(transform.SkipInstrument, err)
	}
	if !b.Modified() && !d.alwaysWrite {
		// The pass left the method alone (the count pass's skip rules): its Code attribute
		// stays as it was, with no encoding, and a class with no edited method is not written.
		return false, nil, nil
	}
	na, err := b.EncodeAttribute(attr.NameIndex)
	if err != nil {
		return skip(transform.SkipUnencodable, err)
	}
	for i, a := range m.Attributes {
		if a == attr {
			m.Attributes[i] = na
			return true, nil, nil
		}
	}
	return false, nil, meth.Errorf(-1, "Code attribute vanished from the method")
}

// skipOf is the Skip of a method kept as it was because of err, met at a step whose failures
// are reported as dflt. The classic limits have fixed wording and no detail, and causes that
// say more than the step (a constructor with no super() call, frames that cannot be derived)
// give their own code; the detail is the error itself, which names the class, method and
// offset, so the code alone groups methods in the summary (issue 37 counted "2752 more methods
// for 2752 other reasons" when reasons held method names).
func skipOf(method string, dflt transform.SkipCode, err error) transform.Skip {
	s := transform.Skip{Method: method, Code: dflt, Detail: err.Error()}
	switch {
	case errors.Is(err, code.ErrCodeTooLarge):
		s.Code, s.Detail = transform.SkipTooLarge, ""
	case errors.Is(err, classfile.ErrPoolOverflow):
		s.Code, s.Detail = transform.SkipPoolFull, ""
	case errors.Is(err, code.ErrUnmappableAttribute):
		s.Code = transform.SkipUnmappable
	case errors.Is(err, commons.ErrNoInitCall):
		s.Code = transform.SkipNoInitCall
	case errors.Is(err, frames.ErrNoFrames):
		s.Code = transform.SkipNoFrames
	}
	return s
}
