package passes

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/commons"
	"github.com/heapledger/heapledger/rewrite/frames"
	"github.com/heapledger/heapledger/rewrite/paths"
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
	// Paths counts objects by path counters (issue 29, rewrite/paths): one increment per
	// method execution stands for several sites, and the runtime turns path counts back into
	// site rows. Arrays, lambdas, clones and reflection keep their per-site counting.
	Paths bool
	// Edges makes a profiling run of the path counters (--counters edges; with Paths): every
	// chord counter is kept, empty semantics included, and named with its edge, so that
	// snapshots carry each method's edge counts, and no method falls back for its cost.
	Edges bool
	// Profile plans the path counters of the methods it holds from their observed edge
	// frequencies (--profile; with Paths), the others from static estimates.
	Profile *paths.Profile
	// Contexts is calling-context mode (--context cct): every method that allocates or calls
	// enters its node of the thread's calling-context tree (context.go).
	Contexts bool
	// CountSwitches counts, per method of an accounted class, the account switches that ran
	// and the ones left out because every caller runs in the method's account (boundary.go),
	// for the snapshots (--count-increments, issue 35): what switching costs a program.
	CountSwitches bool
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
	// dataFlow makes every edited method's frames come from the general data flow of package
	// frames, never from the compiler's frames and the edits (knownFrames): for tests.
	dataFlow bool
	ids      []int // account ID in the table, by 1-based account of opt.Accounts
	// allAccounted is set when the accounts include "*": then no rewritten class is
	// unaccounted, nothing can inherit an account from its caller, and a method needs the
	// account only for its own sites (docs/instrumentation.md, "Every class accounted").
	allAccounted bool
	// inputs reads the other classes of the input (SetInputs); nil under the agent for a
	// class of a loader other than the system class loader.
	inputs func(class string) ([]byte, bool)
	nests  sync.Map // nest host → *nestScan (boundary.go)
	// classes holds what neutral.go read of the input's classes: class name → *inputClass.
	classes sync.Map
}

// SetInputs lets the pass read the other classes of the input (transform.Inputs): the members
// of a class's nest, whose method handles decide which of its private methods need a switch.
func (p *CountPass) SetInputs(lookup func(class string) ([]byte, bool)) { p.ed.inputs = lookup }

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
	// What tells the methods that need no account switch (boundary.go); nil when none switch.
	inner *innerMethods
	// neutral holds the class's account-neutral methods (neutral.go), which need no switch.
	neutral map[*classfile.Member]bool
	// siteless marks, by method index, the methods in which beginClass's scan found no
	// instruction that may become a site: untouched leaves those that need no account switch
	// without decoding them.
	siteless []bool

	// The locals of the method being edited that hold the thread's state and the caller's
	// account: the class's state is the count pass's commons.Advice, and the class's methods
	// are edited one after another.
	t, saved int
	// switchID is the pool constant of the method's ID when its account switch is counted
	// (switchCount), 0 otherwise.
	switchID uint16
	paths    *pathCount // the method's path counters, whose correction Unwind runs first
	// hash names the code of the method being edited in profiles (codeHash), set only for
	// a profiling run or a rewrite with a profile.
	hash string
	// fallback says why the method being edited keeps per-site counters under --counters
	// paths (nil when it does not, or paths were not asked for).
	fallback *transform.Skip
	finished bool // finishClass put the kept sites' IDs into the pool
	// types holds the frames' types of the classes of added locals and of the handler's
	// exception, with their pool constants (knownFrames).
	types map[string]frames.Type
	// known describes the edits of the method being edited to its frames (knownFrames).
	known frames.Known
	local [4]frames.KnownLocal
}

// pendingSite is a site inserted into the code, with the pool constant its ID goes in.
type pendingSite struct {
	id   uint16
	site accounts.Site
}

func (e *countEditor) methodKept(state any, kept bool) *transform.Skip {
	cc := state.(*countClass)
	if kept {
		cc.kept = append(cc.kept, cc.method...)
	}
	cc.method = cc.method[:0]
	fb := cc.fallback
	cc.fallback = nil
	if !kept {
		return nil
	}
	return fb
}

// beginClass reserves, in the class's turn, an ID for every instruction of the class that may
// become an allocation site (candidates), so that the IDs follow the input order whatever the
// workers' timing, and no worker waits for another beyond that scan.
func (e *countEditor) beginClass(cf *classfile.Class, state any, turn *transform.Turn) error {
	cc := state.(*countClass)
	n := 0
	cc.siteless = make([]bool, len(cf.Methods))
	for i, m := range cf.Methods {
		c, _, err := cf.MethodCode(m)
		if err != nil || c == nil {
			continue // the method is kept as it is, and reported, when its turn comes
		}
		k, err := candidates(c.Bytecode, cf.Pool)
		if err != nil {
			continue
		}
		cc.siteless[i] = k == 0
		n += k
		if e.opt.Paths {
			// Path counters and corrections: at most one per edge and one per site.
			n += k + len(c.Bytecode) + len(c.Exceptions) + 1
		}
		if e.opt.Contexts || e.countsSwitches(cc) {
			n++ // the method's own ID (context.go, switchCount)
		}
	}
	turn.Wait()
	first, err := e.opt.Table.Reserve(n)
	cc.first, cc.reserved = first, n
	return err
}

// untouched says, before method i is decoded, that editMethod would leave it as it is: it has
// no instruction that may become a site (beginClass) and needs no account switch (skip rule 2).
// Most methods of a real program are such; deciding it from the scan saves their decoding.
func (e *countEditor) untouched(cf *classfile.Class, m *classfile.Member, i int, state any) bool {
	cc := state.(*countClass)
	if e.opt.Contexts || i >= len(cc.siteless) || !cc.siteless[i] {
		return false // calling contexts: a method that calls enters its node
	}
	if e.countsSwitches(cc) {
		return false // a switch left out is counted
	}
	switching := cc.account != accounts.Unaccounted && !e.allAccounted
	return !switching || cc.inner.sameAccountOnly(cf, m) || cc.neutral[m]
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
	cc := &countClass{account: e.accountOf(cf.Name())}
	if cc.account != accounts.Unaccounted && !e.allAccounted {
		cc.inner = e.findInnerMethods(cf)
		cc.neutral = e.neutralMethods(cf, cc.inner)
	}
	return cc, nil
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

func (e *countEditor) editMethod(cf *classfile.Class, m *classfile.Member, cm *commons.Method, state any) error {
	cc := state.(*countClass)
	b := cm.Body
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
	sites, err := e.findSites(cf, cc, cm)
	if err != nil {
		return err
	}
	lines := lineTable(b)
	// Dead code never runs and keeps the compiler's frames there, which lack the locals
	// inserted below: nothing is counted, restored or covered in it (commons.Wrap).
	if dead := cm.Dead(); dead != nil {
		live := sites[:0]
		for _, s := range sites {
			if !dead[s.at] {
				live = append(live, s)
			}
		}
		sites = live
	}
	switchAccount := acct != accounts.Unaccounted && !e.allAccounted
	// A method whose callers all run in its class's account already (boundary.go), or that
	// runs nothing that charges the thread's account (neutral.go), is rewritten as with '*':
	// no switch, its sites charge the account directly.
	allAccounted := e.allAccounted
	leftOut := switchAccount && (cc.inner.sameAccountOnly(cf, m) || cc.neutral[m])
	if leftOut {
		switchAccount, allAccounted = false, true
	}
	if err := e.switchCount(cc, b, switchAccount, leftOut, lines); err != nil {
		return err
	}
	if e.opt.Contexts {
		static := -1
		if allAccounted {
			static = acct
		}
		return e.editContext(cc, cm, sites, switchAccount && !allAccounted, static)
	}
	// Skip rule 2: a method of an unaccounted class with no allocation site keeps the
	// caller's account and has nothing to count; with every class accounted, no method
	// without a site needs its account.
	if (!switchAccount || allAccounted) && len(sites) == 0 {
		return nil
	}
	static := -1
	if allAccounted {
		static = acct
	}
	t := b.NewLocal(1)
	eager := allAccounted && eagerFetch(b, sites)
	if e.opt.Edges || e.opt.Profile != nil {
		cc.hash = codeHash(cf, m)
	}
	fetch := fetchLazy
	switch {
	case leftOut && cc.neutral[m] && len(sites) > 0:
		fetch = fetchOwn // rule 5 of neutral.go: even when private, its callers may rely on it
	case eager:
		fetch = fetchEager
	}
	pc, err := e.pathCounters(cc, cm, sites, t, static, switchAccount, lines)
	if err != nil {
		return err
	}
	if pc != nil {
		sites = pc.rest
	}
	for _, s := range sites {
		if err := e.insertCount(cc, b, s, t, static, fetch, lines); err != nil {
			return err
		}
	}
	if pc != nil {
		if err := pc.insert(); err != nil {
			return err
		}
	}
	if pc != nil && pc.needsUnwind() && (allAccounted || !switchAccount) {
		// No account switch, so no catch-all handler yet: one that only corrects.
		if _, err := commons.Wrap(cm, pc); err != nil {
			return err
		}
	}
	w, err := e.entry(cm, cc, t, eager, allAccounted, switchAccount, pc)
	if err != nil {
		return err
	}
	if pc != nil {
		// After the entry code, so no handler covers the local before it is set.
		return pc.start()
	}
	added := []addedLocal{{slot: t, class: AcctClass}}
	if switchAccount && !allAccounted {
		added = append(added, addedLocal{slot: cc.saved, afterInit: true})
	}
	e.knownFrames(cc, b, w, added...)
	return nil
}

// knownFrames lets the frames of a method edited without path counters follow from the
// compiler's (frames.Known) instead of a data flow. The edits add the thread's state, assigned
// first thing and an Acct or null everywhere after; in calling-context mode the nodes entered
// from and entered, assigned with it; with an account switch the caller's account, an int from
// the switch after super()/this() on. The catch-all handler, when there is one, reads only
// those. The copies of a multianewarray's dimensions (saveDims) live within one inserted
// sequence and are left out.
func (e *countEditor) knownFrames(cc *countClass, b *code.Body, w commons.Wrapped, added ...addedLocal) {
	fm, ok := b.Frames.(*frames.Method)
	if !ok || e.dataFlow || len(added) > len(cc.local) {
		return
	}
	// The description is the class's, reused method after method: the method is encoded
	// before the next is edited.
	cc.known = frames.Known{Locals: cc.local[:0], Handler: w.Handler, BeforeInit: w.BeforeInit}
	for _, a := range added {
		ty := frames.IntType
		if a.class != "" {
			if ty, ok = cc.classType(b.Pool, a.class); !ok {
				return // the data flow writes the frames, and meets the full pool itself
			}
		}
		cc.known.Locals = append(cc.known.Locals, frames.KnownLocal{Slot: a.slot, Type: ty, AfterInit: a.afterInit})
	}
	if w.Handler != nil {
		if cc.known.Throwable, ok = cc.classType(b.Pool, throwableClass); !ok {
			return
		}
	}
	fm.SetKnown(&cc.known)
}

// addedLocal is a local the count pass adds that frames must hold: a reference of class, or an
// int when class is "", from the start or only after initialisation.
type addedLocal struct {
	slot      int
	class     string
	afterInit bool
}

// classType returns the frame type of a class with its pool constant, resolved once for the
// class's methods: the frame writer would look it up in the pool at each frame.
func (cc *countClass) classType(pool *classfile.Pool, class string) (frames.Type, bool) {
	if t, ok := cc.types[class]; ok {
		return t, true
	}
	i, err := pool.AddClass(class)
	if err != nil {
		return frames.Type{}, false
	}
	if cc.types == nil {
		cc.types = map[string]frames.Type{}
	}
	t := frames.Type{Kind: frames.Object, Class: class, Index: i}
	cc.types[class] = t
	return t, true
}

const throwableClass = "java/lang/Throwable"

// entry inserts what runs on entry (and, with an account switch, on every exit): the thread
// state's fetch or its null, or the commons advice.
func (e *countEditor) entry(cm *commons.Method, cc *countClass, t int, eager, allAccounted, switchAccount bool, pc *pathCount) (commons.Wrapped, error) {
	b := cm.Body
	if allAccounted {
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
		return commons.Wrapped{}, b.InsertAfter(nil, init)
	}
	if !switchAccount {
		s := b.Seq()
		cc.t = t
		cc.Prologue(s)
		return commons.Wrapped{}, b.InsertAfter(nil, s)
	}
	// The account is saved and switched on entry — in a constructor right after super() or
	// this() on each path, so allocations in super(...)'s arguments are charged to the caller
	// (docs/instrumentation.md) — and restored on every exit, normal or exceptional.
	cc.t, cc.saved = t, b.NewLocal(1)
	cc.paths = pc
	w, err := commons.Wrap(cm, cc)
	cc.paths = nil
	return w, err
}

// Prologue fetches the thread's state once at the very start, before any label at offset 0 (a
// loop back to the first instruction must not fetch again) and, in a constructor, before
// super(): fetching runs no code of `this` and sites in super(...)'s arguments need it.
func (cc *countClass) Prologue(s *code.Seq) {
	s.InvokeStatic(LedgerClass, "current", "()"+acctDesc).Store(code.ASTORE, cc.t)
}

// Enter saves the caller's account and switches to the class's, counting the switch when
// switches are counted (switchCount).
func (cc *countClass) Enter(s *code.Seq) {
	s.Load(code.ALOAD, cc.t).Field(code.GETFIELD, AcctClass, "account", "I").Store(code.ISTORE, cc.saved).
		Load(code.ALOAD, cc.t).Int(int32(cc.account)).Field(code.PUTFIELD, AcctClass, "account", "I")
	if cc.switchID != 0 {
		s.Load(code.ALOAD, cc.t).Ldc(cc.switchID).InvokeStatic(AcctClass, "switched", "("+acctDesc+"I)V")
	}
}

// Exit restores the caller's account before a return.
func (cc *countClass) Exit(s *code.Seq, _ *code.Insn) { cc.restore(s) }

// Unwind restores the caller's account when an exception leaves the method, after the path
// counters' correction.
func (cc *countClass) Unwind(s *code.Seq) {
	if cc.paths != nil {
		cc.paths.Unwind(s)
	}
	cc.restore(s)
}

func (cc *countClass) restore(s *code.Seq) {
	s.Load(code.ALOAD, cc.t).Load(code.ILOAD, cc.saved).Field(code.PUTFIELD, AcctClass, "account", "I")
}
