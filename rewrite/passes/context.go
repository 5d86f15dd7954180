package passes

import (
	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/commons"
)

// Calling contexts (issue 30, the count pass's --context cct): every rewritten method that
// allocates or calls enters its node of the thread's calling-context tree (the method call tree
// of "Portable profiling of memory allocation in Java", section 2) and leaves it on every exit.
// The runtime adds each allocation the flat counters count to the current node as well, so the
// tree's allocations are the flat counts split by calling context, row for row. In a method:
//
//  1. Its ID: a site of kind method in the table (accounts.KindMethod), from the IDs the class
//     reserved, so methods of jars rewritten apart never share one (docs/formats.md, "Site IDs").
//  2. Prologue, at the very start (before super() in a constructor, so that the superclass
//     constructor becomes the constructor's child, as in the paper's tree): the thread's state
//     into T, its current node into P, and Context.enter, which makes the method's node current
//     and returns it, into N. The node is keyed by method and the account the method's own code
//     charges: its class's, or for an unaccounted class the caller's (read from T at entry).
//  3. Exit and Unwind (commons.Wrap): the current node back to P before every return and in the
//     catch-all handler, so exceptions unwinding through many frames leave the tree consistent.
//  4. Each of the method's own exception handlers starts by making N current again. The
//     catch-all handler cannot cover what runs before super() in a constructor (the verifier
//     rejects it), so an exception there (in super()'s arguments, or thrown by the superclass
//     constructor) leaves the constructor's node current; the first rewritten handler that
//     catches it puts its own method's node back.
//  5. The account switch of a switching method runs as without contexts (after super()).

// contextAdvice is the commons.Advice of a method in calling-context mode.
type contextAdvice struct {
	cc *countClass
	// t, parent and node are the locals of the thread's state, the node entered from and the
	// method's own node (-1: not kept, the method has no handler of its own).
	t, parent, node int
	mid             uint16 // pool constant of the method's ID
	account         int    // the account its code charges, -1 for the caller's
	switchAccount   bool
}

// editContext rewrites a method for calling contexts: its sites counted as without contexts
// (static ≥ 0 is the account of a method that does not switch, -1 for the thread's), and the
// node entered and left around its body (the steps above).
func (e *countEditor) editContext(cc *countClass, cm *commons.Method, sites []site, switchAccount bool, static int) error {
	b := cm.Body
	lines := lineTable(b)
	// 1.
	mid := cc.switchID
	if mid == 0 {
		var err error
		if mid, err = cc.methodID(b, lines); err != nil {
			return err
		}
	}
	a := &contextAdvice{cc: cc, mid: mid, account: -1, switchAccount: switchAccount, node: -1}
	if static >= 0 {
		a.account = static
	} else if cc.account != accounts.Unaccounted {
		a.account = cc.account
	}
	a.t = b.NewLocal(1)
	for _, s := range sites {
		// The state is fetched on entry, never null: sites take the calls without a null case.
		if err := e.insertCount(cc, b, s, a.t, static, fetchEager, lines); err != nil {
			return err
		}
	}
	a.parent = b.NewLocal(1)
	// 4. (before Wrap adds its own handler)
	if handlers := ownHandlers(cm); len(handlers) > 0 {
		a.node = b.NewLocal(1)
		for _, h := range handlers {
			s := b.Seq().Load(code.ALOAD, a.t).Load(code.ALOAD, a.node).Field(code.PUTFIELD, AcctClass, "node", contextDesc)
			if err := b.InsertAfter(h.Node(), s); err != nil {
				return err
			}
		}
	}
	if switchAccount {
		cc.t, cc.saved = a.t, b.NewLocal(1)
	}
	// 2, 3, 5.
	w, err := commons.Wrap(cm, a)
	if err != nil {
		return err
	}
	added := []addedLocal{{slot: a.t, class: AcctClass}, {slot: a.parent, class: ContextClass}}
	if a.node >= 0 {
		added = append(added, addedLocal{slot: a.node, class: ContextClass})
	}
	if switchAccount {
		added = append(added, addedLocal{slot: cc.saved, afterInit: true})
	}
	e.knownFrames(cc, b, w, added...)
	return nil
}

// methodID adds the method's ID, a site of kind method, to the class's pending sites and
// returns the pool constant finishClass puts it in.
func (cc *countClass) methodID(b *code.Body, lines *sourceLines) (uint16, error) {
	mid, err := b.Pool.AddUniqueInteger()
	if err != nil {
		return 0, b.Method.Errorf(-1, "method ID constant: %w", err)
	}
	cc.method = append(cc.method, pendingSite{mid, accounts.Site{Kind: accounts.KindMethod, Type: classfile.JavaName(b.Method.Class),
		Method: classfile.JavaName(b.Method.Class) + "." + b.Method.Name + b.Method.Desc, Offset: 0, Line: firstLine(b, lines)}})
	return mid, nil
}

// ownHandlers returns the distinct handler labels of the method's exception table whose code
// some path reaches.
func ownHandlers(cm *commons.Method) []*code.Label {
	dead := cm.Dead()
	seen := map[*code.Label]bool{}
	var out []*code.Label
	for _, h := range cm.Body.Handlers {
		if seen[h.Handler] {
			continue
		}
		seen[h.Handler] = true
		n := h.Handler.Node()
		for n != nil && n.IsLabel() {
			n = n.Next()
		}
		if n != nil && !dead[n] {
			out = append(out, h.Handler)
		}
	}
	return out
}

// firstLine is the source line of the method's first instruction that has one, -1 when none.
func firstLine(b *code.Body, lines *sourceLines) int {
	cur := -1
	for n := b.First(); n != nil; n = n.Next() {
		if !n.IsLabel() {
			if cur >= 0 {
				return cur
			}
			continue
		}
		if l, ok := lines.starts[n.Label]; ok {
			cur = l
		}
	}
	return -1
}

// Context is the runtime's calling-context node (runtime-java/rt).
const (
	ContextClass = "heapledger/rt/Context"
	contextDesc  = "L" + ContextClass + ";"
)

// Prologue fetches the thread's state and enters the method's node (step 2).
func (a *contextAdvice) Prologue(s *code.Seq) {
	s.InvokeStatic(LedgerClass, "current", "()"+acctDesc).Store(code.ASTORE, a.t).
		Load(code.ALOAD, a.t).Field(code.GETFIELD, AcctClass, "node", contextDesc).Store(code.ASTORE, a.parent).
		Load(code.ALOAD, a.t).Ldc(a.mid)
	if a.account >= 0 {
		s.Int(int32(a.account)).InvokeStatic(ContextClass, "enter", "("+acctDesc+"II)"+contextDesc)
	} else {
		s.InvokeStatic(ContextClass, "enter", "("+acctDesc+"I)"+contextDesc)
	}
	if a.node >= 0 {
		s.Store(code.ASTORE, a.node)
	} else {
		s.Op(code.POP)
	}
}

// Enter switches the account after super()/this(), in a method that switches (step 5).
func (a *contextAdvice) Enter(s *code.Seq) {
	if a.switchAccount {
		a.cc.Enter(s)
	}
}

// Exit restores the account and the node the method was entered from before a return.
func (a *contextAdvice) Exit(s *code.Seq, _ *code.Insn) { a.Unwind(s) }

// Unwind restores them when an exception leaves the method.
func (a *contextAdvice) Unwind(s *code.Seq) {
	if a.switchAccount {
		a.cc.Unwind(s)
	}
	s.Load(code.ALOAD, a.t).Load(code.ALOAD, a.parent).Field(code.PUTFIELD, AcctClass, "node", contextDesc)
}
