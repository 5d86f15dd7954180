package passes

import (
	"strings"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// fetching is how a method whose sites charge a fixed account has the thread's state at hand.
type fetching int

const (
	fetchLazy  fetching = iota // '*': the first site reached fetches it (t starts null)
	fetchEager                 // '*': fetched on entry (eagerFetch)
	fetchOwn                   // account-neutral with sites (lazy or eager): the thread's account left alone
)

// eagerFetch reports whether a method of a '*' rewrite fetches the thread's state on entry:
// when it has two sites or more, or one in a method with a loop, not counting sites whose
// object is thrown at once (an exception's construction is a cold path, and a hot method with
// a few argument checks must not pay a fetch per call for them).
func eagerFetch(b *code.Body, sites []site) bool {
	warm := 0
	for _, s := range sites {
		if !thrown(s) {
			warm++
		}
	}
	return warm >= 2 || warm == 1 && hasLoop(b)
}

// thrown reports whether a site's object is thrown right after construction (new X; dup; ...;
// invokespecial X.<init>; athrow).
func thrown(s site) bool {
	if s.how() != countRef || s.at == nil {
		return false
	}
	n := s.at.Next()
	for n != nil && n.Op == code.OpLabel {
		n = n.Next()
	}
	return n != nil && n.Op == code.ATHROW
}

// hasLoop reports whether the method's original code branches backwards (a loop), by the
// original offsets of branches, switches and their targets.
func hasLoop(b *code.Body) bool {
	back := func(from int, to *code.Label) bool { return to != nil && to.Offset >= 0 && to.Offset <= from }
	for n := b.First(); n != nil; n = n.Next() {
		if n.Offset < 0 || n.Op == code.OpLabel {
			continue
		}
		if back(n.Offset, n.Target) {
			return true
		}
		if sw := n.Switch; sw != nil {
			if back(n.Offset, sw.Default) {
				return true
			}
			for _, l := range sw.Targets {
				if back(n.Offset, l) {
					return true
				}
			}
		}
	}
	return false
}

// insertCount inserts the counting call of s after s.at, as the countings table says for its
// kind. Its site ID is a constant of its own in the pool, filled in when the class's sites are
// numbered (finishClass). With static ≥ 0 (every class accounted) the account goes with the
// call, t may still be null (the runtime fetches the thread's state then) and the call returns
// the state, which goes back into t; fetchEager says t was fetched on entry and is never null,
// so objects and arrays take Acct.count, which has no null case; fetchOwn, in an
// account-neutral method with sites (neutral.go, rule 5), takes Acct.own, which leaves the
// thread's account alone.
func (e *countEditor) insertCount(cc *countClass, b *code.Body, s site, t, static int, fetch fetching, lines *sourceLines) error {
	id, err := nameSite(cc, b, s, lines)
	if err != nil {
		return err
	}
	if static >= 0 && e.opt.ObjectInit && kinds[s.kind].constructs {
		set := b.Seq().Load(code.ALOAD, t).Int(int32(static)).InvokeStatic(AcctClass, "charge", "("+acctDesc+"I)"+acctDesc).Store(code.ASTORE, t)
		if err := b.InsertBefore(s.at, set); err != nil {
			return err
		}
	}
	how := s.how()
	c := countings[how]
	q := b.Seq()
	if fetch == fetchOwn && how != countRef && how != countNoRef && how != countArray {
		return b.Method.Errorf(s.off, "internal: a %s site in an account-neutral method", kinds[s.kind].table)
	}
	returned := static >= 0 // the '*' calls hand the thread's state back
	if how == countMulti {
		name, ret := "multi", "V"
		if static >= 0 {
			name, ret = "multiIn", acctDesc
		}
		if err := multiCall(b, s, q, t, name, ret, static, id); err != nil {
			return err
		}
	} else {
		first := c.first
		switch {
		case how == countArray:
			first = s.arrayDesc
		case how == countNoRef && classLiteral(q, b, s):
			first = "Ljava/lang/Class;"
		}
		if c.dup {
			q.Op(code.DUP)
		}
		q.Load(code.ALOAD, t)
		name, tail := c.method, "I)V"
		if static >= 0 {
			q.Int(int32(static))
			switch {
			case fetch == fetchOwn:
				name, tail, returned = "own", "II)V", false
			case fetch == fetchEager && c.fetched:
				name, tail, returned = "count", "II)V", false
			default:
				tail = "II)" + acctDesc
			}
		}
		q.Ldc(id).InvokeStatic(AcctClass, name, "("+first+acctDesc+tail)
	}
	if returned {
		q.Store(code.ASTORE, t)
	}
	return b.InsertAfter(s.at, q)
}

// nameSite gives site s a pool constant for its ID and notes it for the class's table
// (finishClass), returning the constant.
func nameSite(cc *countClass, b *code.Body, s site, lines *sourceLines) (uint16, error) {
	line := -1
	if l, ok := lines.of(s.at); ok {
		line = l
	}
	id, err := b.Pool.AddUniqueInteger()
	if err != nil {
		return 0, b.Method.Errorf(s.off, "site constant: %w", err)
	}
	cc.method = append(cc.method, pendingSite{id, accounts.Site{Kind: kinds[s.kind].table, Type: s.typ, Method: methodName(b), Offset: s.off, Line: line}})
	return id, nil
}

// methodName is the method as the table names it: package.Class.name(descriptor).
func methodName(b *code.Body) string {
	return classfile.JavaName(b.Method.Class) + "." + b.Method.Name + b.Method.Desc
}

// classLiteral pushes the class of a kindObjectNoRef site (new X; invokespecial X.<init> with no
// dup: Scala's and Kotlin's singletons in <clinit>), so that the runtime knows the size of what
// it counts without the object; it reports whether it did. Class literals need class files of
// version 49 or later; the class is loaded already, since its object was just made.
func classLiteral(q *code.Seq, b *code.Body, s site) bool {
	if b.Method.Major < 49 {
		return false
	}
	idx, err := b.Pool.AddClass(classfile.InternalName(s.typ))
	if err != nil {
		return false
	}
	q.Ldc(idx)
	return true
}

// multiCall appends the counting call of a multianewarray site to q: the new array (so that its
// liveness can be tracked), t, the saved dimensions (in an int[] beyond three), the shape, then
// the account when it is fixed (account ≥ 0) and the site's ID constant, to Acct.name returning
// ret.
func multiCall(b *code.Body, s site, q *code.Seq, t int, name, ret string, account int, id uint16) error {
	locals, err := saveDims(b, s)
	if err != nil {
		return err
	}
	q.Op(code.DUP).Load(code.ALOAD, t)
	dims := strings.Repeat("I", s.dims)
	if s.dims <= 3 {
		for _, l := range locals {
			q.Load(code.ILOAD, l)
		}
	} else {
		q.Int(int32(s.dims)).Insn(code.Insn{Op: code.NEWARRAY, Int: 10})
		for i, l := range locals {
			q.Op(code.DUP).Int(int32(i)).Load(code.ILOAD, l).Op(code.IASTORE)
		}
		dims = "[I"
	}
	q.Int(int32(s.shape))
	trailing := "I"
	if account >= 0 {
		q.Int(int32(account))
		trailing = "II"
	}
	q.Ldc(id)
	q.InvokeStatic(AcctClass, name, "(Ljava/lang/Object;"+acctDesc+dims+"I"+trailing+")"+ret)
	return nil
}

// saveDims keeps copies of a multianewarray's dimensions in new locals, inserted before the
// instruction (which consumes them), so they can be passed on after the allocation succeeded
// (nothing is counted if it fails). It returns the locals, outermost dimension first.
func saveDims(b *code.Body, s site) ([]int, error) {
	locals := make([]int, s.dims)
	save := b.Seq()
	for i := range locals {
		locals[i] = b.NewLocal(1)
	}
	for i := s.dims - 1; i >= 0; i-- {
		save.Store(code.ISTORE, locals[i])
	}
	for i := 0; i < s.dims; i++ {
		save.Load(code.ILOAD, locals[i])
	}
	if err := b.InsertBefore(s.at, save); err != nil {
		return nil, err
	}
	return locals, nil
}

// sourceLines gives instructions their source lines from the LineNumberTable: an instruction's
// line is that of the nearest line-start label before it. Only sites and a method's first line
// are asked for, so a lookup walks back from the instruction instead of the table mapping every
// instruction up front (a map of every instruction of every edited method was a measurable
// share of the count pass). Sites are asked for in code order, so the last answer is kept and a
// walk back stops at it: without that, a long method with few line entries walked back over
// the same code for every site. Labels a pass inserts start no line, and the instructions asked
// about stay in the body, so asking after an edit gives what asking before it would have.
type sourceLines struct {
	starts map[*code.Label]int
	last   *code.Insn // the instruction last asked about, nil before the first
	line   int        // its answer
	ok     bool
}

// lineTable reads the method's line-start labels; without any, every lookup answers none.
func lineTable(b *code.Body) *sourceLines {
	s := &sourceLines{}
	for _, a := range b.Attrs {
		if a.Kind == code.AttrLineNumbers {
			if s.starts == nil {
				s.starts = make(map[*code.Label]int, len(a.Lines))
			}
			for _, ln := range a.Lines {
				s.starts[ln.Start] = int(ln.Line)
			}
		}
	}
	return s
}

// of is the source line of instruction n.
func (s *sourceLines) of(n *code.Insn) (int, bool) {
	if len(s.starts) == 0 {
		return 0, false
	}
	if n == s.last {
		return s.line, s.ok
	}
	line, ok := 0, false
	for p := n.Prev(); p != nil; p = p.Prev() {
		if p.IsLabel() {
			if l, found := s.starts[p.Label]; found {
				line, ok = l, true
				break
			}
		}
		if p == s.last { // after its own label's line, if it is one: that starts at it
			line, ok = s.line, s.ok
			break
		}
	}
	s.last, s.line, s.ok = n, line, ok
	return line, ok
}
