package frames

import (
	"fmt"
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
}

// engine runs the data flow over one body. In strict mode (methods with frames) merges never
// guess a common supertype; in lenient mode (Infer, for code without frames) two different
// classes merge to "some reference".
type engine struct {
	body       *code.Body
	m          machine
	nodes      []*code.Insn
	heads      []*head // by node index; nil where no head starts
	handlers   []handlerSpan
	covering   [][]int // per node index: the handlers whose range holds it (nil when none)
	jsrReturns []*head
	initial    Frame
	origLocals int
	work       []*head
	visit      func(in *code.Insn, before *Frame) error
	slab       []head // heads are handed out from here, a chunk at a time
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
		covering: e.covering[:0],
		slab:     e.slab[:0],
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
		return nil, fmt.Errorf("%s: %v", h.why(), err)
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
	if len(e.body.Handlers) > 0 {
		if n := len(e.nodes); cap(e.covering) < n {
			e.covering = make([][]int, n)
		} else {
			e.covering = e.covering[:n]
			for i := range e.covering {
				e.covering[i] = e.covering[i][:0]
			}
		}
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
							return fmt.Errorf("exception handler %d: catch type: %v", k, cerr)
						}
						catch = ObjectType(name)
					}
					e.handlers = append(e.handlers, handlerSpan{s, end, h, catch})
					for i := s + 1; i < end; i++ {
						e.covering[i] = append(e.covering[i], len(e.handlers)-1)
					}
					continue
				}
			}
		}
		return fmt.Errorf("exception handler %d: %v", k, err)
	}
	return nil
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
			return fmt.Errorf("%s: stack slot %d at a join (%s): %v", where(from), i, h.why(), err)
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
func (e *engine) mergeLocals(a, b []Type) []Type {
	n := len(a)
	if len(b) > n {
		n = len(b)
	}
	out := make([]Type, n)
	for i := range out {
		ta, tb := TopType, TopType
		if i < len(a) {
			ta = a[i]
		}
		if i < len(b) {
			tb = b[i]
		}
		out[i] = e.mergeLocal(ta, tb)
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
	if h := e.heads[0]; h != nil {
		if err := e.merge(h, &e.initial, nil, e.nodes[0]); err != nil {
			return err
		}
	} else if len(e.nodes) > 0 {
		if err := e.walk(0, e.initial); err != nil {
			return err
		}
	}
	if err := e.drain(); err != nil {
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

func (e *engine) drain() error {
	for len(e.work) > 0 {
		h := e.work[len(e.work)-1]
		e.work = e.work[:len(e.work)-1]
		h.queued = false
		if err := e.walk(h.idx, h.frame(e.origLocals)); err != nil {
			return err
		}
	}
	return nil
}

// sortedHeads returns the head indices in code order.
func (e *engine) sortedHeads() []int {
	out := make([]int, 0, len(e.heads))
	for i := range e.nodes {
		if e.heads[i] != nil {
			out = append(out, i)
		}
	}
	return out
}

// walk replays straight-line code from node start with state s until control leaves it: at a
// jump, a return, or the next head (which then receives s as an incoming edge).
func (e *engine) walk(start int, s Frame) error {
	f := s.Clone()
	e.m.f = &f
	for i := start; i < len(e.nodes); i++ {
		n := e.nodes[i]
		if i != start {
			if h := e.heads[i]; h != nil {
				return e.merge(h, &f, nil, n)
			}
		}
		if n.IsLabel() {
			continue
		}
		var covering []int
		if len(e.covering) > 0 {
			covering = e.covering[i]
		}
		for _, k := range covering {
			if err := e.merge(e.handlers[k].head, &f, &e.handlers[k].catch, n); err != nil {
				return err
			}
		}
		if e.visit != nil {
			if err := e.visit(n, &f); err != nil {
				return err
			}
		}
		var pre Frame
		if n.Op == code.JSR || n.Op == code.JSR_W {
			pre = f.Clone()
		}
		if err := e.m.exec(n); err != nil {
			return fmt.Errorf("%s: %v", where(n), err)
		}
		if !code.EndsFlow(n.Op) {
			// The JVM also checks handlers against the state after an instruction (a store
			// inside a try block changes a local the handler may read).
			for _, k := range covering {
				if err := e.merge(e.handlers[k].head, &f, &e.handlers[k].catch, n); err != nil {
					return err
				}
			}
		}
		switch {
		case n.Op == code.JSR || n.Op == code.JSR_W:
			if err := e.mergeLabel(n.Target, &f, n); err != nil {
				return err
			}
			// The subroutine returns to the next instruction; besides the states its ret
			// brings there, assume it may leave the locals as they were.
			if i+1 < len(e.nodes) {
				return e.merge(e.headAt(i+1), &pre, nil, n)
			}
			return nil
		case code.IsBranch(n.Op):
			if err := e.mergeLabel(n.Target, &f, n); err != nil {
				return err
			}
		case n.Switch != nil:
			if err := e.mergeLabel(n.Switch.Default, &f, n); err != nil {
				return err
			}
			for _, t := range n.Switch.Targets {
				if err := e.mergeLabel(t, &f, n); err != nil {
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

func (e *engine) mergeLabel(l *code.Label, f *Frame, from *code.Insn) error {
	i, err := e.labelIndex(l)
	if err != nil {
		return fmt.Errorf("%s: target %v", where(from), err)
	}
	return e.merge(e.heads[e.runStart(i)], f, nil, from)
}
