package passes

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/frames"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// Runtime classes the count pass calls (runtime-java/rt).
const (
	LedgerClass = "heapledger/rt/Ledger"
	AcctClass   = "heapledger/rt/Acct"
	acctDesc    = "L" + AcctClass + ";"
)

// CountOptions configures the count pass.
type CountOptions struct {
	// Accounts decides the account of each class; nil or empty means no account switching:
	// every allocation is charged to <unaccounted>.
	Accounts *accounts.Set
	// Table receives every allocation site and names the accounts. Required.
	Table *accounts.Table
	// ObjectInit says the runtime's Object.<init> hook counts every construction (the agent's
	// --object-init), charged to the thread's account at that moment. With every class
	// accounted, methods do not switch accounts, so sites whose objects run a constructor then
	// set the account before it runs, for the hook to charge what the site will.
	ObjectInit bool
}

// Count returns the memory-accounting pass (issue 3): the account pass and the allocation
// pass in one rewrite. See docs/instrumentation.md for what is inserted and every skip rule.
func Count(opt CountOptions) (*CountPass, error) {
	if opt.Table == nil {
		return nil, fmt.Errorf("count pass needs a site table")
	}
	ed := &countEditor{opt: opt}
	if opt.Accounts != nil {
		ed.ids = opt.Table.Merge(opt.Accounts)
		ed.allAccounted = opt.Accounts.CoversAll()
	}
	return &CountPass{driver: &driver{name: "count", ed: ed}, ed: ed}, nil
}

// CountPass is the count pass. Besides rewriting classes it notes the ones it saw, so that
// account patterns that matched none of them can be told (accounts.Set.Unmatched).
type CountPass struct {
	*driver
	ed *countEditor
}

// Classes returns the internal names of the classes the pass saw, sorted: those it was given,
// less the ones it never rewrites (heapledger's own, module-info, classes rewritten before).
func (p *CountPass) Classes() []string {
	p.ed.mu.Lock()
	defer p.ed.mu.Unlock()
	out := slices.Clone(p.ed.seen)
	slices.Sort(out)
	return out
}

type countEditor struct {
	mu   sync.Mutex
	seen []string // classes prepared, for CountPass.Classes

	opt CountOptions
	ids []int // account ID in the table, by 1-based account of opt.Accounts
	// allAccounted is set when the accounts include "*": then no rewritten class is
	// unaccounted, nothing can inherit an account from its caller, and a method needs the
	// account only for its own sites (docs/instrumentation.md, "Every class accounted").
	allAccounted bool
}

// countClass is what the methods of one class share: its account and, parsed on first use,
// its bootstrap methods.
type countClass struct {
	account int
	bsms    []classfile.BootstrapMethod
	bsmErr  error
	parsed  bool
	// The sites of the method being edited, and of the methods whose new code is kept: only
	// those are named, so a method left as it was names no site.
	method, kept []pendingSite
	// The IDs reserved for the class (beginClass): reserved from first.
	first, reserved int
	finished        bool // finishClass put the kept sites' IDs into the pool
}

// pendingSite is a site inserted into the code, with the pool constant its ID goes in.
type pendingSite struct {
	id   uint16
	site accounts.Site
}

func (e *countEditor) methodKept(state any, kept bool) {
	cc := state.(*countClass)
	if kept {
		cc.kept = append(cc.kept, cc.method...)
	}
	cc.method = cc.method[:0]
}

// beginClass reserves, in the class's turn, an ID for every instruction of the class that may
// become an allocation site (candidates), so that the IDs follow the input order whatever the
// workers' timing, and no worker waits for another beyond that scan.
func (e *countEditor) beginClass(cf *classfile.Class, state any, turn *transform.Turn) error {
	cc := state.(*countClass)
	n := 0
	for _, m := range cf.Methods {
		c, _, err := cf.MethodCode(m)
		if err != nil || c == nil {
			continue // the method is kept as it is, and reported, when its turn comes
		}
		k, err := candidates(c.Bytecode, cf.Pool)
		if err != nil {
			continue
		}
		n += k
	}
	turn.Wait()
	first, err := e.opt.Table.Reserve(n)
	cc.first, cc.reserved = first, n
	return err
}

// candidates counts the instructions of bc that may become allocation sites (findSites): every
// constructor call (a `new`'s, or a super()/this(), which is not), array creation,
// invokedynamic, and call of a method named clone or newInstance.
func candidates(bc []byte, pool *classfile.Pool) (int, error) {
	n := 0
	err := code.Scan(bc, func(pc int, op code.Opcode) bool {
		switch op {
		case code.NEWARRAY, code.ANEWARRAY, code.MULTIANEWARRAY, code.INVOKEDYNAMIC:
			n++
		case code.INVOKESPECIAL, code.INVOKEVIRTUAL, code.INVOKESTATIC:
			switch string(pool.MemberName(binary.BigEndian.Uint16(bc[pc+1:]))) { // no allocation
			case "<init>", "clone", "newInstance":
				n++
			}
		}
		return true
	})
	return n, err
}

// finishClass names the sites of the class's kept methods with the IDs beginClass reserved, in
// order, and fills in their constants.
func (e *countEditor) finishClass(cf *classfile.Class, state any) error {
	cc := state.(*countClass)
	if len(cc.kept) > cc.reserved {
		return fmt.Errorf("internal: %d allocation sites, %d IDs reserved", len(cc.kept), cc.reserved)
	}
	for i, p := range cc.kept {
		e.opt.Table.Name(cc.first+i, p.site)
		if err := cf.Pool.SetInteger(p.id, int32(cc.first+i)); err != nil {
			return err
		}
	}
	cc.finished = true
	return nil
}

// taken reports the IDs beginClass reserved and the pool constants finishClass put the used
// ones in, in ID order; the pool list is empty when the class was not changed.
func (e *countEditor) taken(state any) *transform.IDs {
	cc := state.(*countClass)
	ids := &transform.IDs{First: cc.first, Reserved: cc.reserved}
	if cc.finished {
		ids.Pool = make([]uint16, len(cc.kept))
		for i, p := range cc.kept {
			ids.Pool[i] = p.id
		}
	}
	return ids
}

func (e *countEditor) prepareClass(cf *classfile.Class) (any, error) {
	e.mu.Lock()
	e.seen = append(e.seen, cf.Name())
	e.mu.Unlock()
	return &countClass{account: e.accountOf(cf.Name())}, nil
}

// accountOf returns the table ID of the class's account, 0 when it has none.
func (e *countEditor) accountOf(class string) int {
	if e.opt.Accounts == nil {
		return accounts.Unaccounted
	}
	a := e.opt.Accounts.Of(class)
	if a == accounts.Unaccounted {
		return a
	}
	return e.ids[a]
}

// site is one allocation found in a method, with how to count it.
type site struct {
	at   *code.Insn // count after this instruction
	kind string
	typ  string // Java type name
	off  int    // original offset of the allocating instruction
	// how: "ref" (reference on top after at: dup + object), "noref" (object without the
	// reference), "array" (typed one-dimensional array on top), "any" (array of unknown
	// static type on top), "multi"
	how       string
	arrayDesc string // descriptor of the array overload for "array"
	dims      int    // multianewarray dimensions
	shape     int    // multianewarray: arrayDim | base<<8
}

func (e *countEditor) editMethod(cf *classfile.Class, m *classfile.Member, b *code.Body, state any) error {
	cc := state.(*countClass)
	acct := cc.account
	calls := false
	mayAlloc := false
	for n := b.First(); n != nil; n = n.Next() {
		switch n.Op {
		case code.INVOKEVIRTUAL, code.INVOKESPECIAL, code.INVOKESTATIC, code.INVOKEINTERFACE, code.INVOKEDYNAMIC:
			calls = true
		case code.NEW, code.NEWARRAY, code.ANEWARRAY, code.MULTIANEWARRAY:
			mayAlloc = true
		}
	}
	// Skip rule 1: a method that neither allocates nor calls cannot allocate anything that
	// the account or the sites would see; it is left alone.
	if !calls && !mayAlloc {
		return nil
	}
	sites, err := e.findSites(cf, cc, b)
	if err != nil {
		return err
	}
	// Dead code never runs and keeps the compiler's frames there, which lack the locals
	// inserted below: nothing is counted, restored or covered in it (addHandlers).
	dead := deadCode(b)
	if dead != nil {
		live := sites[:0]
		for _, s := range sites {
			if !dead[s.at] {
				live = append(live, s)
			}
		}
		sites = live
	}
	switchAccount := acct != accounts.Unaccounted && !e.allAccounted
	// Skip rule 2: a method of an unaccounted class with no allocation site keeps the
	// caller's account and has nothing to count; with every class accounted, no method
	// without a site needs its account.
	if (!switchAccount || e.allAccounted) && len(sites) == 0 {
		return nil
	}
	static := -1
	if e.allAccounted {
		static = acct
	}
	var inits []*code.Insn
	if switchAccount {
		if inits, err = initCalls(b); err != nil {
			return err
		}
	}

	lines := lineTable(b)
	t := b.NewLocal(1)
	eager := e.allAccounted && eagerFetch(b, sites)
	for _, s := range sites {
		if err := e.insertCount(cc, b, s, t, static, eager, lines); err != nil {
			return err
		}
	}

	if e.allAccounted {
		// Lazy (most methods): t starts null and the first counting call the invocation
		// reaches fetches the thread's state and hands it back (Acct's '*' overloads), so a
		// method whose sites sit on cold paths (a throw, a cache miss) costs nothing when they
		// are not taken. Eager (sites in a loop, or several): the state is fetched on entry
		// and every site's call has no null case, which the JIT would otherwise compile at
		// each one. Before any label at offset 0, so a loop back to the start keeps t.
		init := b.Seq().Op(code.ACONST_NULL).Store(code.ASTORE, t)
		if eager {
			init = b.Seq().InvokeStatic(LedgerClass, "current", "()"+acctDesc).Store(code.ASTORE, t)
		}
		if err := init.Err(); err != nil {
			return err
		}
		b.InsertAfter(nil, init)
		return nil
	}

	// The thread's state is fetched once at the very start, before any label at offset 0 (a
	// loop back to the first instruction must not fetch again) and, in a constructor, before
	// super(): fetching runs no code of `this` and sites in super(...)'s arguments need it.
	fetch := b.Seq().InvokeStatic(LedgerClass, "here", "()"+acctDesc).Store(code.ASTORE, t)
	if err := fetch.Err(); err != nil {
		return err
	}
	if !switchAccount {
		b.InsertAfter(nil, fetch)
		return nil
	}

	saved := b.NewLocal(1)
	restore := func() *code.Seq {
		return b.Seq().Load(code.ALOAD, t).Load(code.ILOAD, saved).Field(code.PUTFIELD, AcctClass, "account", "I")
	}
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op >= code.IRETURN && n.Op <= code.RETURN && !dead[n] {
			s := restore()
			if err := s.Err(); err != nil {
				return err
			}
			b.InsertBefore(n, s)
		}
	}
	end := b.NewLabel()
	handler := b.NewLabel()
	tail := b.Seq().Mark(end).Mark(handler)
	tail.Load(code.ALOAD, t).Load(code.ILOAD, saved).Field(code.PUTFIELD, AcctClass, "account", "I").Op(code.ATHROW)
	if err := tail.Err(); err != nil {
		return err
	}
	// In a constructor the account switches right after super()/this() on each path: no
	// handler may cover code before it, so allocations in super(...)'s arguments are charged
	// to the caller (docs/instrumentation.md).
	starts := inits
	if len(starts) == 0 {
		starts = []*code.Insn{nil}
	}
	var ranges []*code.Label
	for i, at := range starts {
		start := b.NewLabel()
		s := b.Seq()
		if at == nil {
			s = fetch
		}
		s.Load(code.ALOAD, t).Field(code.GETFIELD, AcctClass, "account", "I").Store(code.ISTORE, saved).
			Load(code.ALOAD, t).Int(int32(acct)).Field(code.PUTFIELD, AcctClass, "account", "I").Mark(start)
		if err := s.Err(); err != nil {
			return err
		}
		b.InsertAfter(at, s)
		if at != nil && i == 0 {
			b.InsertAfter(nil, fetch)
		}
		ranges = append(ranges, start)
	}
	b.Append(tail)
	return addHandlers(b, ranges, end, handler, inits, dead)
}

// findSites lists the allocations of a method. Objects are paired with the constructor call
// that initialises them by following uninitialized(new) through the code (frames.Infer); the
// constructor's own super()/this() call initialises uninitializedThis and is not a site.
func (e *countEditor) findSites(cf *classfile.Class, cc *countClass, b *code.Body) ([]site, error) {
	var out []site
	var fa *frames.Analysis
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op == code.NEW {
			var err error
			if fa, err = frames.Infer(b); err != nil {
				return nil, err
			}
			break
		}
	}
	pool := b.Pool
	if fa != nil {
		err := fa.Walk(func(in *code.Insn, before *frames.Frame) error {
			if in.Op != code.INVOKESPECIAL {
				return nil
			}
			owner, name, desc, err := pool.MemberRef(in.Index)
			if err != nil || name != "<init>" {
				return err
			}
			args, err := classfile.MethodArgSlots(desc)
			if err != nil {
				return err
			}
			st := before.Stack
			if len(st) < args+1 {
				return fmt.Errorf("%s at offset %d: stack too short for %s.<init>%s", b.Method, in.Offset, owner, desc)
			}
			recv := st[len(st)-1-args]
			if recv.Kind != frames.Uninitialized || recv.Site == nil {
				return nil // super()/this(), not an allocation
			}
			s := site{at: in, kind: accounts.KindObject, typ: javaName(owner), off: recv.Site.Offset, how: "noref"}
			// javac, Kotlin and Scala keep a second reference to the new object under the
			// receiver (new; dup): after the call it is on top, and we can pass it on.
			if len(st) >= args+2 && st[len(st)-2-args].Equal(recv) {
				s.how = "ref"
			}
			out = append(out, s)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for n := b.First(); n != nil; n = n.Next() {
		switch n.Op {
		case code.NEWARRAY:
			elem, ok := newarrayTypes[n.Int]
			if !ok {
				return nil, fmt.Errorf("%s at offset %d: newarray of unknown type %d", b.Method, n.Offset, n.Int)
			}
			out = append(out, site{at: n, kind: accounts.KindArray, typ: typeName(elem) + "[]", off: n.Offset, how: "array", arrayDesc: "[" + elem})
		case code.ANEWARRAY:
			c, err := pool.ClassName(n.Index)
			if err != nil {
				return nil, fmt.Errorf("%s at offset %d: %v", b.Method, n.Offset, err)
			}
			out = append(out, site{at: n, kind: accounts.KindArray, typ: typeName(classfile.DescriptorOfClass(c)) + "[]", off: n.Offset, how: "array", arrayDesc: "[Ljava/lang/Object;"})
		case code.MULTIANEWARRAY:
			c, err := pool.ClassName(n.Index)
			if err != nil {
				return nil, fmt.Errorf("%s at offset %d: %v", b.Method, n.Offset, err)
			}
			arrayDim, elem := classfile.ArrayDims(c)
			dims := int(n.Int)
			if dims < 1 || dims > arrayDim || arrayDim > 255 {
				return nil, fmt.Errorf("%s at offset %d: multianewarray %s with %d dimensions", b.Method, n.Offset, c, dims)
			}
			s := site{at: n, kind: accounts.KindMulti, typ: typeName(c), off: n.Offset, how: "multi", dims: dims}
			base := int('L')
			if len(elem) == 1 {
				base = int(elem[0])
			}
			s.shape = arrayDim | base<<8
			if dims == 1 {
				s.kind, s.how, s.arrayDesc = accounts.KindArray, "array", "[Ljava/lang/Object;"
				if arrayDim == 1 && len(elem) == 1 {
					s.arrayDesc = "[" + elem
				}
			}
			out = append(out, s)
		case code.INVOKEDYNAMIC:
			s, ok, err := e.indySite(cf, cc, b, n)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, s)
			}
		case code.INVOKEVIRTUAL, code.INVOKESTATIC, code.INVOKEINTERFACE:
			owner, name, desc, err := pool.MemberRef(n.Index)
			if err != nil {
				return nil, fmt.Errorf("%s at offset %d: %v", b.Method, n.Offset, err)
			}
			switch {
			case n.Op == code.INVOKEVIRTUAL && name == "clone" && strings.HasPrefix(desc, "()") && classfile.IsReference(desc[2:]):
				if strings.HasPrefix(owner, "[") {
					out = append(out, site{at: n, kind: accounts.KindCloneArray, typ: typeName(owner), off: n.Offset, how: "any"})
				} else {
					out = append(out, site{at: n, kind: accounts.KindClone, typ: javaName(owner), off: n.Offset, how: "ref"})
				}
			case n.Op == code.INVOKESTATIC && owner == "java/lang/reflect/Array" && name == "newInstance":
				out = append(out, site{at: n, kind: accounts.KindReflectArray, typ: "(reflective array)", off: n.Offset, how: "any"})
			case n.Op == code.INVOKEVIRTUAL && owner == "java/lang/reflect/Constructor" && name == "newInstance",
				n.Op == code.INVOKEVIRTUAL && owner == "java/lang/Class" && name == "newInstance" && desc == "()Ljava/lang/Object;":
				out = append(out, site{at: n, kind: accounts.KindReflect, typ: "(reflective object)", off: n.Offset, how: "ref"})
			}
		}
	}
	return out, nil
}

// indySite recognises the invokedynamic call sites that allocate: capturing lambdas
// (LambdaMetafactory with at least one captured value; a non-capturing lambda is a cached
// singleton) and string concatenation (StringConcatFactory), whose result is a new String.
func (e *countEditor) indySite(cf *classfile.Class, cc *countClass, b *code.Body, n *code.Insn) (site, bool, error) {
	c, err := b.Pool.Entry(n.Index)
	if err != nil {
		return site{}, false, fmt.Errorf("%s at offset %d: %v", b.Method, n.Offset, err)
	}
	_, desc, err := b.Pool.DynamicNameAndType(n.Index)
	if err != nil {
		return site{}, false, fmt.Errorf("%s at offset %d: %v", b.Method, n.Offset, err)
	}
	bsms, err := cc.bootstrapMethods(cf)
	if err != nil {
		return site{}, false, err
	}
	if int(c.A) >= len(bsms) {
		return site{}, false, fmt.Errorf("%s at offset %d: bootstrap method %d of %d", b.Method, n.Offset, c.A, len(bsms))
	}
	h, err := b.Pool.Entry(bsms[c.A].MethodRef)
	if err != nil || h.Tag != classfile.TagMethodHandle {
		return site{}, false, fmt.Errorf("%s at offset %d: bootstrap method is not a method handle", b.Method, n.Offset)
	}
	owner, _, _, err := b.Pool.MemberRef(h.B)
	if err != nil {
		return site{}, false, fmt.Errorf("%s at offset %d: %v", b.Method, n.Offset, err)
	}
	md, err := classfile.ParseMethodDescriptor(desc)
	if err != nil {
		return site{}, false, fmt.Errorf("%s at offset %d: %v", b.Method, n.Offset, err)
	}
	ret, ok := classfile.ClassOfDescriptor(md.Return)
	if !ok {
		return site{}, false, nil
	}
	switch owner {
	case "java/lang/invoke/LambdaMetafactory":
		if len(md.Args) == 0 {
			return site{}, false, nil
		}
		return site{at: n, kind: accounts.KindLambda, typ: javaName(ret), off: n.Offset, how: "ref"}, true, nil
	case "java/lang/invoke/StringConcatFactory":
		return site{at: n, kind: accounts.KindConcat, typ: "java.lang.String", off: n.Offset, how: "ref"}, true, nil
	}
	return site{}, false, nil
}

func (cc *countClass) bootstrapMethods(cf *classfile.Class) ([]classfile.BootstrapMethod, error) {
	if !cc.parsed {
		cc.parsed = true
		a := classfile.FindAttribute(cf.Attributes, "BootstrapMethods", cf.Pool)
		if a == nil {
			cc.bsmErr = fmt.Errorf("%s: invokedynamic without a BootstrapMethods attribute", cf.Name())
		} else if cc.bsms, cc.bsmErr = classfile.ParseBootstrapMethods(a); cc.bsmErr != nil {
			cc.bsmErr = fmt.Errorf("%s: BootstrapMethods: %v", cf.Name(), cc.bsmErr)
		}
	}
	return cc.bsms, cc.bsmErr
}

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
	if s.how != "ref" || s.at == nil {
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

// insertCount inserts the counting call of s after s.at. Its site ID is a constant of its own
// in the pool, filled in when the class's sites are numbered (finishClass). With static ≥ 0
// (every class accounted) the account goes with the call (insertStaticCount); eager says t is
// fetched on entry and never null.
func (e *countEditor) insertCount(cc *countClass, b *code.Body, s site, t, static int, eager bool, lines map[*code.Insn]int) error {
	line := -1
	if l, ok := lines[s.at]; ok {
		line = l
	}
	id, err := b.Pool.AddUniqueInteger()
	if err != nil {
		return err
	}
	cc.method = append(cc.method, pendingSite{id, accounts.Site{Kind: s.kind, Type: s.typ, Method: javaName(b.Method.Class) + "." + b.Method.Name + b.Method.Desc, Offset: s.off, Line: line}})
	if static >= 0 {
		return e.insertStaticCount(b, s, t, static, id, eager)
	}
	q := b.Seq()
	switch s.how {
	case "ref":
		q.Op(code.DUP).Load(code.ALOAD, t).Ldc(id).InvokeStatic(AcctClass, "object", "(Ljava/lang/Object;"+acctDesc+"I)V")
	case "noref":
		if classLiteral(q, b, s) {
			q.Load(code.ALOAD, t).Ldc(id).InvokeStatic(AcctClass, "object", "(Ljava/lang/Class;"+acctDesc+"I)V")
		} else {
			q.Load(code.ALOAD, t).Ldc(id).InvokeStatic(AcctClass, "object", "("+acctDesc+"I)V")
		}
	case "array":
		q.Op(code.DUP).Load(code.ALOAD, t).Ldc(id).InvokeStatic(AcctClass, "array", "("+s.arrayDesc+acctDesc+"I)V")
	case "any":
		q.Op(code.DUP).Load(code.ALOAD, t).Ldc(id).InvokeStatic(AcctClass, "anyArray", "(Ljava/lang/Object;"+acctDesc+"I)V")
	case "multi":
		if err := multiCall(b, s, q, t, "multi", "V", -1, id); err != nil {
			return err
		}
	default:
		return fmt.Errorf("internal: site kind %q", s.how)
	}
	if err := q.Err(); err != nil {
		return err
	}
	b.InsertAfter(s.at, q)
	return nil
}

// insertStaticCount inserts the counting call of a site whose account is fixed (every class
// accounted): the account goes with the call, t may still be null (the runtime fetches the
// thread's state then) and the call returns the state, which goes back into t. With eager, t
// was fetched on entry: objects and arrays take Acct.count, which has no null case.
func (e *countEditor) insertStaticCount(b *code.Body, s site, t, account int, id uint16, eager bool) error {
	if e.opt.ObjectInit && constructs(s.kind) {
		set := b.Seq().Load(code.ALOAD, t).Int(int32(account)).InvokeStatic(AcctClass, "charge", "("+acctDesc+"I)"+acctDesc).Store(code.ASTORE, t)
		if err := set.Err(); err != nil {
			return err
		}
		b.InsertBefore(s.at, set)
	}
	q := b.Seq()
	if eager && (s.how == "ref" || s.how == "array") {
		first := "Ljava/lang/Object;"
		if s.how == "array" {
			first = s.arrayDesc
		}
		q.Op(code.DUP).Load(code.ALOAD, t).Int(int32(account)).Ldc(id).InvokeStatic(AcctClass, "count", "("+first+acctDesc+"II)V")
		if err := q.Err(); err != nil {
			return err
		}
		b.InsertAfter(s.at, q)
		return nil
	}
	tail := acctDesc + "II)" + acctDesc
	switch s.how {
	case "ref":
		q.Op(code.DUP).Load(code.ALOAD, t).Int(int32(account)).Ldc(id).InvokeStatic(AcctClass, "object", "(Ljava/lang/Object;"+tail)
	case "noref":
		if classLiteral(q, b, s) {
			q.Load(code.ALOAD, t).Int(int32(account)).Ldc(id).InvokeStatic(AcctClass, "object", "(Ljava/lang/Class;"+tail)
		} else {
			q.Load(code.ALOAD, t).Int(int32(account)).Ldc(id).InvokeStatic(AcctClass, "object", "("+tail)
		}
	case "array":
		q.Op(code.DUP).Load(code.ALOAD, t).Int(int32(account)).Ldc(id).InvokeStatic(AcctClass, "array", "("+s.arrayDesc+tail)
	case "any":
		q.Op(code.DUP).Load(code.ALOAD, t).Int(int32(account)).Ldc(id).InvokeStatic(AcctClass, "anyArray", "(Ljava/lang/Object;"+tail)
	case "multi":
		if err := multiCall(b, s, q, t, "multiIn", acctDesc, account, id); err != nil {
			return err
		}
	default:
		return fmt.Errorf("internal: site kind %q", s.how)
	}
	q.Store(code.ASTORE, t)
	if err := q.Err(); err != nil {
		return err
	}
	b.InsertAfter(s.at, q)
	return nil
}

// constructs reports whether a site's objects run a constructor while the site's instruction
// runs (object: the <init> call; reflect, lambda, concat: the call or invokedynamic), which the
// Object.<init> hook counts then.
func constructs(kind string) bool {
	switch kind {
	case accounts.KindObject, accounts.KindReflect, accounts.KindLambda, accounts.KindConcat:
		return true
	}
	return false
}

// classLiteral pushes the class of a "noref" object site (new X; invokespecial X.<init> with no
// dup: Scala's and Kotlin's singletons in <clinit>), so that the runtime knows the size of what
// it counts without the object; it reports whether it did. Class literals need class files of
// version 49 or later; the class is loaded already, since its object was just made.
func classLiteral(q *code.Seq, b *code.Body, s site) bool {
	if b.Method.Major < 49 {
		return false
	}
	idx, err := b.Pool.AddClass(strings.ReplaceAll(s.typ, ".", "/"))
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
	if err := save.Err(); err != nil {
		return nil, err
	}
	b.InsertBefore(s.at, save)
	return locals, nil
}

// lineTable maps each instruction to its source line, from the LineNumberTable.
func lineTable(b *code.Body) map[*code.Insn]int {
	starts := map[*code.Label]int{}
	for _, a := range b.Attrs {
		if a.Kind == code.AttrLineNumbers {
			for _, ln := range a.Lines {
				starts[ln.Start] = int(ln.Line)
			}
		}
	}
	if len(starts) == 0 {
		return nil
	}
	out := map[*code.Insn]int{}
	cur := -1
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			if l, ok := starts[n.Label]; ok {
				cur = l
			}
			continue
		}
		if cur >= 0 {
			out[n] = cur
		}
	}
	return out
}

var newarrayTypes = map[int32]string{4: "Z", 5: "C", 6: "F", 7: "D", 8: "B", 9: "S", 10: "I", 11: "J"}

// javaName turns an internal class name into a Java name: "java/util/Map$Entry" →
// "java.util.Map$Entry".
func javaName(internal string) string { return strings.ReplaceAll(internal, "/", ".") }

// typeName turns a field descriptor or array class name into a Java type name: "[[I" →
// "int[][]", "Ljava/lang/String;" → "java.lang.String".
func typeName(desc string) string {
	dims, elem := classfile.ArrayDims(desc)
	var base string
	switch elem {
	case "Z":
		base = "boolean"
	case "B":
		base = "byte"
	case "C":
		base = "char"
	case "S":
		base = "short"
	case "I":
		base = "int"
	case "J":
		base = "long"
	case "F":
		base = "float"
	case "D":
		base = "double"
	default:
		base = javaName(strings.TrimSuffix(strings.TrimPrefix(elem, "L"), ";"))
	}
	return base + strings.Repeat("[]", dims)
}
