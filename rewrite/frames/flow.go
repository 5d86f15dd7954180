package frames

import (
	"fmt"
	"slices"
	"sync"

	"github.com/heapledger/heapledger/rewrite/code"
)

// head is a point of the instruction list where control flow joins or a frame is written: a
// run of labels (or, for the return point of a jsr, an instruction). Straight-line code between
// heads is replayed from the head's state whenever it is needed, so states are stored only here.
type head struct {
	idx int // index of the first node of the run in engine.nodes

	// fixed is the compiler's frame when the method had one here. It is authoritative for the
	// slots the compiler managed (below engine.origLocals); only the slots of locals added by a
	// pass are merged from the incoming edges, into ext.
	fixed   *Frame
	fixedAt int // original offset of the compiler frame, for messages
	ext     []Type

	state   Frame // the merged incoming state of a derived head
	visited bool
	queued  bool
	walked  bool // the engine walked from here (VisitReached's one pass walks each head once)
	needed  bool // a frame must be written here (branch target, handler, after a jump)

	// Why a frame is needed, for messages; the text is built only when one is printed.
	reason     reason
	reasonFrom *code.Insn
	handler    int

	// sawUninitThis records that some incoming state had uninitializedThis in its locals: the
	// JVM's flagThisUninit, which a frame keeps only through uninitializedThis itself.
	sawUninitThis bool
}

// handlerSpan is one exception-table entry by node indices.
type handlerSpan struct {
	start, end int // instructions strictly between these label nodes are covered
	head       *head
	catch      Type
	// merged is the machine's locals generation (machine.localsGen) this handler was last
	// merged with: see mergeHandlers.
	merged uint64
}

// engine runs the data flow over one body. In strict mode (methods with frames) merges never
// guess a common supertype; in lenient mode (Infer, for code without frames) two different
// classes merge to "some reference".
type engine struct {
	body     *code.Body
	m        machine
	nodes    []*code.Insn
	heads    []*head // by node index; nil where no head starts
	handlers []handlerSpan
	// The handlers covering each node (see indexCovering); empty when there are none.
	covStart, covList, covFill []int32
	jsrReturns                 []*head
	initial                    Frame
	origLocals                 int
	work                       []*head
	visit                      func(in *code.Insn, before *Frame) error
	once                       bool   // VisitReached: a head walked twice is an error
	slab                       []head // heads are handed out from here, a chunk at a time

	// Scratch reused across the walks and merges of one run (and across runs, through the
	// pool): the state a walk replays, and a join before it is known to change anything.
	cur      Frame
	mergeBuf []Type
	sorted   []int
}

// engines recycles the engines of EncodeFrames, which runs once per edited method on the
// rewriter's hot path; their slices are reused instead of reallocated.
var engines = sync.Pool{New: func() any { return &engine{} }}

func newEngine(b *code.Body, initial Frame, strict bool) *engine {
	e := engines.Get().(*engine)
	b.Number() // node indices are Insn.Num from here on
	args := e.m.args
	*e = engine{
		body:     b,
		initial:  initial,
		nodes:    e.nodes[:0],
		heads:    e.heads[:0],
		work:     e.work[:0],
		covStart: e.covStart[:0],
		covList:  e.covList[:0],
		covFill:  e.covFill[:0],
		slab:     e.slab[:0],
		cur:      Frame{Locals: e.cur.Locals[:0], Stack: e.cur.Stack[:0]},
		mergeBuf: e.mergeBuf[:0],
		sorted:   e.sorted[:0],
	}
	e.m = machine{pool: b.Pool, class: b.Method.Class, strict: strict, args: args[:0]}
	for n := b.First(); n != nil; n = n.Next() {
		e.nodes = append(e.nodes, n)
	}
	if n := len(e.nodes) + 1; cap(e.heads) >= n {
		e.heads = e.heads[:n] // cleared by release
	} else {
		e.heads = make([]*head, n)
	}
	return e
}

// release returns an engine that nothing refers to any more to the pool.
func (e *engine) release() {
	clear(e.heads)
	clear(e.nodes)
	clear(e.slab[:cap(e.slab)])
	// Types hold class names and instructions; drop them so the pool keeps nothing alive.
	clear(e.cur.Locals[:cap(e.cur.Locals)])
	clear(e.cur.Stack[:cap(e.cur.Stack)])
	clear(e.mergeBuf[:cap(e.mergeBuf)])
	e.body, e.visit, e.jsrReturns, e.handlers = nil, nil, nil, nil
	engines.Put(e)
}

// where names an instruction for error messages: its original offset, or the original
// instruction that inserted code follows.
func where(in *code.Insn) string {
	if in.Offset >= 0 {
		return fmt.Sprintf("offset %d (%s)", in.Offset, in)
	}
	for p := in.Prev(); p != nil; p = p.Prev() {
		if !p.IsLabel() && p.Offset >= 0 {
			return fmt.Sprintf("inserted %s after offset %d", in, p.Offset)
		}
	}
	return fmt.Sprintf("inserted %s at the start", in)
}

// runStart backs up from node i over the labels just before it: every label of a run marks
// the same offset, so they share one head.
func (e *engine) runStart(i int) int {
	for i > 0 && e.nodes[i-1].IsLabel() {
		i--
	}
	return i
}

func (e *engine) labelIndex(l *code.Label) (int, error) {
	if l == nil || l.Node() == nil {
		return 0, fmt.Errorf("label is not placed in the code")
	}
	i := l.Node().Num()
	if i < 0 || i >= len(e.nodes) || e.nodes[i] != l.Node() {
		return 0, fmt.Errorf("label is not placed in this method's code")
	}
	return i, nil
}

// headAt returns the head for the run holding node i, making it when needed.
func (e *engine) headAt(i int) *head {
	i = e.runStart(i)
	h := e.heads[i]
	if h == nil {
		if len(e.slab) == cap(e.slab) {
			e.slab = make([]head, 0, max(16, cap(e.slab)))
		}
		e.slab = append(e.slab, head{idx: i})
		h = &e.slab[len(e.slab)-1]
		e.heads[i] = h
	}
	return h
}

type reason uint8

const (
	noReason reason = iota
	branchTarget
	switchTarget
	afterJump
	handlerStart
)

// why says why the head needs a frame.
func (h *head) why() string {
	switch h.reason {
	case branchTarget:
		return "branch target of " + where(h.reasonFrom)
	case switchTarget:
		return "switch target of " + where(h.reasonFrom)
	case afterJump:
		return "code after an unconditional jump"
	case handlerStart:
		return fmt.Sprintf("exception handler %d", h.handler)
	}
	return "join"
}

func (e *engine) labelHead(l *code.Label, r reason, from *code.Insn) (*head, error) {
	i, err := e.labelIndex(l)
	if err != nil {
		h := head{reason: r, reasonFrom: from}
		return nil, fmt.Errorf("%s: %w", h.why(), err)
	}
	h := e.headAt(i)
	h.needed = true
	if h.reason == noReason {
		h.reason, h.reasonFrom = r, from
	}
	return h, nil
}

// findHeads marks every point that needs a frame: branch and switch targets, handlers, the
// instruction after an unconditional jump, and in lenient mode the return points of jsr.
func (e *engine) findHeads() error {
	after := false
	for i, n := range e.nodes {
		if n.IsLabel() {
			continue
		}
		if after {
			// headAt backs up over the labels before the instruction; labels after the last
			// instruction (ends of ranges) need no frame.
			h := e.headAt(i)
			h.needed, after = true, false
			if h.reason == noReason {
				h.reason = afterJump
			}
		}
		switch {
		case n.Op == code.JSR || n.Op == code.JSR_W:
			if e.m.strict {
				return fmt.Errorf("%s: jsr in a class file that needs stack map frames", where(n))
			}
			if i+1 < len(e.nodes) {
				e.jsrReturns = append(e.jsrReturns, e.headAt(i+1))
			}
			fallthrough
		case code.IsBranch(n.Op):
			if _, err := e.labelHead(n.Target, branchTarget, n); err != nil {
				return err
			}
		case n.Switch != nil:
			if _, err := e.labelHead(n.Switch.Default, switchTarget, n); err != nil {
				return err
			}
			for _, t := range n.Switch.Targets {
				if _, err := e.labelHead(t, switchTarget, n); err != nil {
					return err
				}
			}
		}
		after = code.EndsFlow(n.Op)
	}
	for k, hd := range e.body.Handlers {
		s, err := e.labelIndex(hd.Start)
		if err == nil {
			var end int
			if end, err = e.labelIndex(hd.End); err == nil && end < s {
				err = fmt.Errorf("ends before it starts")
			}
			if err == nil {
				var h *head
				if h, err = e.labelHead(hd.Handler, handlerStart, nil); err == nil {
					h.reason, h.handler = handlerStart, k // the most telling reason a frame is needed
					catch := ObjectType("java/lang/Throwable")
					if hd.CatchType != 0 {
						name, cerr := e.body.Pool.ClassName(hd.CatchType)
						if cerr != nil {
							return fmt.Errorf("exception handler %d: catch type: %w", k, cerr)
						}
						catch = ObjectType(name)
					}
					e.handlers = append(e.handlers, handlerSpan{start: s, end: end, head: h, catch: catch})
					continue
				}
			}
		}
		return fmt.Errorf("exception handler %d: %w", k, err)
	}
	e.indexCovering()
	return nil
}

// indexCovering lists, for every node, the handlers whose range holds it, in exception-table
// order: node i's are covList[covStart[i]:covStart[i+1]]. One flat list instead of a slice per
// node, because a handler a pass adds over a whole body covers every node.
func (e *engine) indexCovering() {
	if len(e.handlers) == 0 {
		e.covStart = e.covStart[:0]
		return
	}
	n := len(e.nodes)
	start := slices.Grow(e.covStart[:0], n+1)[:n+1]
	clear(start)
	total := 0
	for _, hs := range e.handlers {
		for i := hs.start + 1; i < hs.end; i++ {
			start[i+1]++
		}
		total += max(hs.end-hs.start-1, 0)
	}
	for i := 0; i < n; i++ {
		start[i+1] += start[i]
	}
	list := slices.Grow(e.covList[:0], total)[:total]
	fill := slices.Grow(e.covFill[:0], n)[:n]
	copy(fill, start[:n])
	for k, hs := range e.handlers {
		for i := hs.start + 1; i < hs.end; i++ {
			list[fill[i]] = int32(k)
			fill[i]++
		}
	}
	e.covStart, e.covList, e.covFill = start, list, fill
}

// covering returns the handlers whose range holds node i.
func (e *engine) covering(i int) []int32 {
	if len(e.covStart) == 0 {
		return nil
	}
	return e.covList[e.covStart[i]:e.covStart[i+1]]
}

// frame is the state a walk starts from at h.
func (h *head) frame(origLocals int) Frame {
	if h.fixed == nil {
		return h.state
	}
	if !hasNonTop(h.ext) {
		return *h.fixed
	}
	f := Frame{Locals: make([]Type, 0, origLocals+len(h.ext)), Stack: h.fixed.Stack}
	f.Locals = append(f.Locals, h.fixed.Locals...)
	for len(f.Locals) < origLocals {
		f.Locals = append(f.Locals, TopType)
	}
	f.Locals = trimTop(append(f.Locals, h.ext...))
	return f
}

func hasNonTop(ts []Type) bool {
	for _, t := range ts {
		if t.Kind != Top {
			return true
		}
	}
	return false
}

// trimTop drops trailing Top locals, which a frame need not say, but not the second half of a
// long or double.
func trimTop(ts []Type) []Type {
	for len(ts) > 0 && ts[len(ts)-1].Kind == Top && (len(ts) < 2 || !ts[len(ts)-2].IsWide()) {
		ts = ts[:len(ts)-1]
	}
	return ts
}

func hasUninitThis(ts []Type) bool {
	for _, t := range ts {
		if t.Kind == UninitializedThis {
			return true
		}
	}
	return false
}

// merge brings an incoming state to h along one edge; catch, when not nil, makes it an
// exception edge, whose stack is the caught exception alone.
func (e *engine) merge(h *head, in *Frame, catch *Type, from *code.Insn) error {
	locals := in.Locals
	if hasUninitThis(locals) {
		h.sawUninitThis = true
	}
	if h.fixed != nil {
		var ext []Type
		if len(locals) > e.origLocals {
			ext = locals[e.origLocals:]
		}
		if !h.visited {
			h.visited, h.ext = true, trimTop(append([]Type(nil), ext...))
			e.enqueue(h)
			return nil
		}
		merged := e.mergeLocals(h.ext, ext)
		if !typesEqual(merged, h.ext) {
			h.ext = merged
			e.enqueue(h)
		}
		return nil
	}
	stack := in.Stack
	if catch != nil {
		stack = []Type{*catch}
	}
	if !h.visited {
		h.visited = true
		h.state = Frame{Locals: append([]Type(nil), locals...), Stack: append([]Type(nil), stack...)}
		e.enqueue(h)
		return nil
	}
	if len(stack) != len(h.state.Stack) {
		return fmt.Errorf("%s: stack of %d slots meets one of %d at a join (%s)", where(from), len(stack), len(h.state.Stack), h.why())
	}
	newStack := h.state.Stack
	for i := range stack {
		t, err := e.mergeStack(h.state.Stack[i], stack[i])
		if err != nil {
			return fmt.Errorf("%s: stack slot %d at a join (%s): %w", where(from), i, h.why(), err)
		}
		if !t.Equal(h.state.Stack[i]) {
			if &newStack[0] == &h.state.Stack[0] {
				newStack = append([]Type(nil), newStack...)
			}
			newStack[i] = t
		}
	}
	merged := e.mergeLocals(h.state.Locals, locals)
	if !typesEqual(merged, h.state.Locals) || !typesEqual(newStack, h.state.Stack) {
		h.state = Frame{Locals: merged, Stack: newStack}
		e.enqueue(h)
	}
	return nil
}

func (e *engine) enqueue(h *head) {
	if !h.queued {
		h.queued = true
		e.work = append(e.work, h)
	}
}

// mergeLocals joins two locals arrays slot by slot. Slots that disagree become Top, which is
// always a correct join for a local: code after the join that still reads such a slot fails in
// the strict machine instead of getting a guessed type.
//
// When the join equals a, a itself is returned and nothing is allocated: a handler over a whole
// body is merged into before and after every instruction it covers, and almost every one of
// those merges changes nothing. Otherwise the result is a new slice that shares nothing with a
// or b.
func (e *engine) mergeLocals(a, b []Type) []Type {
	if e.keepsLocals(a, b) {
		return a
	}
	out := e.joinLocals(a, b, e.mergeBuf[:0])
	e.mergeBuf = out[:0]
	if typesEqual(out, a) {
		return a
	}
	return append([]Type(nil), out...)
}

// joinLocals builds the join of a and b slot by slot into buf.
func (e *engine) joinLocals(a, b, buf []Type) []Type {
	n := max(len(a), len(b))
	out := buf
	for i := range n {
		ta, tb := TopType, TopType
		if i < len(a) {
			ta = a[i]
		}
		if i < len(b) {
			tb = b[i]
		}
		out = append(out, e.mergeLocal(ta, tb))
	}
	// A long whose halves met different things is no long any more.
	for i := 0; i+1 < len(out); i++ {
		if out[i].IsWide() && out[i+1].Kind != Top {
			out[i] = TopType
		}
	}
	if n > 0 && out[n-1].IsWide() {
		out = append(out, TopType)
	}
	return trimTop(out)
}

// keepsLocals reports, without building the join, that mergeLocals(a, b) is a: every slot of
// a already absorbs b's (it is equal, Top, or a class that absorbs null), and a is in the form
// a join produces (no wide type without its Top half, no trailing Top to trim). It is the
// common case at a handler covering much code, merged into before and after every instruction.
func (e *engine) keepsLocals(a, b []Type) bool {
	for i := range a {
		x := &a[i]
		if x.IsWide() && (i+1 >= len(a) || a[i+1].Kind != Top) {
			return false
		}
		if i == len(a)-1 && x.Kind == Top && (i == 0 || !a[i-1].IsWide()) {
			return false // trimTop would drop it
		}
		if i >= len(b) {
			if x.Kind != Top {
				return false // b is Top there, and so is the join
			}
			continue
		}
		y := &b[i]
		switch {
		case x.Kind == Top:
			if !e.m.strict && y.Kind == UninitializedThis {
				return false
			}
		case x.Kind == Object && y.Kind == Null:
		case x.Kind != y.Kind:
			return false
		case x.Kind == Object:
			if x.Class != y.Class {
				return false
			}
		case x.Kind == Uninitialized:
			if !x.Equal(*y) {
				return false
			}
		}
	}
	if !e.m.strict {
		for i := len(a); i < len(b); i++ {
			if b[i].Kind == UninitializedThis {
				return false
			}
		}
	}
	return true
}

func (e *engine) mergeLocal(a, b Type) Type {
	switch {
	case a.Equal(b):
		return a
	case !e.m.strict && (a.Kind == UninitializedThis || b.Kind == UninitializedThis):
		// Without frames the analysis keeps the JVM's flagThisUninit in the type itself: a
		// path on which this is not yet initialized keeps it so after the join.
		return UninitThis
	case a.Kind == Null && b.Kind == Object:
		return b
	case b.Kind == Null && a.Kind == Object:
		return a
	case !e.m.strict && isInitRef(a) && isInitRef(b):
		return ObjectType("")
	}
	return TopType
}

func isInitRef(t Type) bool { return t.Kind == Object || t.Kind == Null }

// mergeStack joins two stack slots. Unlike a local, a stack slot is always used, so where the
// join of two classes would need the class hierarchy the strict engine gives up.
func (e *engine) mergeStack(a, b Type) (Type, error) {
	switch {
	case a.Equal(b):
		return a, nil
	case a.Kind == Null && b.Kind == Object:
		return b, nil
	case b.Kind == Null && a.Kind == Object:
		return a, nil
	case !e.m.strict && isInitRef(a) && isInitRef(b):
		return ObjectType(""), nil
	case !e.m.strict && a.IsReference() && b.IsReference():
		return ObjectType(""), nil
	}
	if a.IsReference() && b.IsReference() {
		return Type{}, fmt.Errorf("%s and %s have no common supertype known without loading classes", a, b)
	}
	return Type{}, fmt.Errorf("%s meets %s", a, b)
}

// run propagates states from the entry and from every compiler frame until nothing changes.
func (e *engine) run() error {
	if err := e.fromEntry(); err != nil {
		return err
	}
	// Compiler frames that no path from the entry reaches start dead code, which the JVM
	// still checks. They are walked only now: walking them earlier would bring their states,
	// which lack every local a pass added, into the joins of live code.
	for _, i := range e.sortedHeads() {
		if h := e.heads[i]; h.fixed != nil && !h.visited {
			h.visited = true
			e.enqueue(h)
		}
	}
	return e.drain()
}

// fromEntry propagates states from the method's start until nothing changes.
func (e *engine) fromEntry() error {
	if h := e.heads[0]; h != nil {
		if err := e.merge(h, &e.initial, nil, e.nodes[0]); err != nil {
			return err
		}
	} else if len(e.nodes) > 0 {
		if err := e.walk(0, e.initial); err != nil {
			return err
		}
	}
	return e.drain()
}

func (e *engine) drain() error {
	for len(e.work) > 0 {
		h := e.work[len(e.work)-1]
		e.work = e.work[:len(e.work)-1]
		h.queued = false
		if e.once && h.walked {
			return errNotOnePass
		}
		h.walked = true
		if err := e.walk(h.idx, h.frame(e.origLocals)); err != nil {
			return err
		}
	}
	return nil
}

// sortedHeads returns the head indices in code order. The slice is the engine's and is
// overwritten by the next call.
func (e *engine) sortedHeads() []int {
	out := e.sorted[:0]
	for i := range e.nodes {
		if e.heads[i] != nil {
			out = append(out, i)
		}
	}
	e.sorted = out
	return out
}

// walk replays straight-line code from node start with state s until control leaves it: at a
// jump, a return, or the next head (which then receives s as an incoming edge).
//
// The replayed state lives in e.cur, which the next walk overwrites: everything that keeps a
// state (merge, Analysis.Before) copies it.
func (e *engine) walk(start int, s Frame) error {
	e.m.localsGen++ // new locals: no handler has seen them
	e.cur.Locals = append(e.cur.Locals[:0], s.Locals...)
	e.cur.Stack = append(e.cur.Stack[:0], s.Stack...)
	f := &e.cur
	e.m.f = f
	for i := start; i < len(e.nodes); i++ {
		n := e.nodes[i]
		if i != start {
			if h := e.heads[i]; h != nil {
				return e.merge(h, f, nil, n)
			}
		}
		if n.IsLabel() {
			continue
		}
		covering := e.covering(i)
		if err := e.mergeHandlers(covering, f, n); err != nil {
			return err
		}
		if e.visit != nil {
			if err := e.visit(n, f); err != nil {
				return err
			}
		}
		var pre Frame
		if n.Op == code.JSR || n.Op == code.JSR_W {
			pre = f.Clone()
		}
		if err := e.m.exec(n); err != nil {
			return fmt.Errorf("%s: %w", where(n), err)
		}
		if !code.EndsFlow(n.Op) {
			// The JVM also checks handlers against the state after an instruction (a store
			// inside a try block changes a local the handler may read).
			if err := e.mergeHandlers(covering, f, n); err != nil {
				return err
			}
		}
		switch {
		case n.Op == code.JSR || n.Op == code.JSR_W:
			if err := e.mergeLabel(n.Target, f, n); err != nil {
				return err
			}
			// The subroutine returns to the next instruction; besides the states its ret
			// brings there, assume it may leave the locals as they were.
			if i+1 < len(e.nodes) {
				return e.merge(e.headAt(i+1), &pre, nil, n)
			}
			return nil
		case code.IsBranch(n.Op):
			if err := e.mergeLabel(n.Target, f, n); err != nil {
				return err
			}
		case n.Switch != nil:
			if err := e.mergeLabel(n.Switch.Default, f, n); err != nil {
				return err
			}
			for _, t := range n.Switch.Targets {
				if err := e.mergeLabel(t, f, n); err != nil {
					return err
				}
			}
		case n.Op == code.RET:
			for _, h := range e.jsrReturns {
				ret := f.Clone()
				if err := e.merge(h, &ret, nil, n); err != nil {
					return err
				}
			}
		}
		if code.EndsFlow(n.Op) {
			return nil
		}
	}
	return fmt.Errorf("execution falls off the end of the code")
}

// mergeHandlers brings the state f at instruction from to the handlers that cover it. A
// handler's incoming stack is the caught exception whatever f's, so only f's locals matter;
// and a join is idempotent and only ever moves a head's state up, so merging the locals a
// handler has already been merged with changes nothing, then or later. A walk changes its
// locals only at stores and constructor calls, which bump the machine's localsGen; between
// them the merges before and after each instruction are skipped. Without this, a handler a
// pass adds over a whole body costs a comparison of every local at every instruction.
//
// The first state a head without a compiler frame receives is stored as it comes, a trailing
// Top included, and only a second merge joins it into the form every later one keeps: so a
// merge counts as done only when the head had been reached before it.
func (e *engine) mergeHandlers(covering []int32, f *Frame, from *code.Insn) error {
	for _, k := range covering {
		hs := &e.handlers[k]
		if hs.merged == e.m.localsGen {
			continue
		}
		reached := hs.head.visited
		if err := e.merge(hs.head, f, &hs.catch, from); err != nil {
			return err
		}
		if reached {
			hs.merged = e.m.localsGen
		}
	}
	return nil
}

func (e *engine) mergeLabel(l *code.Label, f *Frame, from *code.Insn) error {
	i, err := e.labelIndex(l)
	if err != nil {
		return fmt.Errorf("%s: target %w", where(from), err)
	}
	return e.merge(e.heads[e.runStart(i)], f, nil, from)
}
