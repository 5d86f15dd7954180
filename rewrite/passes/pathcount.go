package passes

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/cfg"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/commons"
	"github.com/heapledger/heapledger/rewrite/paths"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// Path counters (--counters paths, issue 29). The object sites of a method are counted by the
// counters of package paths instead of a call each: the method's graph (package cfg), its
// paths and counters (paths.MakePlan), and here the code: a call to Acct.path on each counter
// edge, the progress local's constant stores where the deficit class changes, and Acct.fix in
// every handler, the count pass's catch-all included. docs/instrumentation.md, "Path counters".

// pathCount is what the pass inserts for one method's path counters.
type pathCount struct {
	cc   *countClass
	b    *code.Body
	c    *cfg.CFG
	plan *paths.Plan
	rest []site // the sites that keep their own call
	// entries[i] is the method's pending-site index of path site i.
	entries []int
	t, p    int // the thread state's local, the progress local (-1 without corrections)
	account int // charged account, -1 for the thread's
	class   uint16
	fix     uint16 // the pool constant of the first correction's ID
	// keys name the graph's edges across rewrites, for the chord counters of a profiling run
	// (--counters edges; nil otherwise), whose method's code has hash.
	keys []paths.EdgeKey
	hash string
}

// pathCounters plans the path counters of a method. It returns nil when the method keeps
// per-site counting: when the pass does not count by paths or no site can be path-counted,
// and, noted in cc.fallback for the rewrite's summary, when the class file is older than 49
// (no class constants) or the method has no graph the counters can be placed on (fallback).
func (e *countEditor) pathCounters(cc *countClass, cm *commons.Method, sites []site, t, static int, switchAccount bool, lines *sourceLines) (*pathCount, error) {
	b := cm.Body
	if !e.opt.Paths {
		return nil, nil
	}
	var pre map[*code.Insn]bool
	split := map[*code.Insn]bool{}
	if b.Method.Name == "<init>" {
		an, err := cm.Constructors()
		if err != nil {
			return nil, err
		}
		pre = an.BeforeInit(b)
		calls, err := cm.InitCalls()
		if err != nil {
			return nil, err
		}
		for _, c := range calls {
			split[c] = true
		}
	}
	pc := &pathCount{cc: cc, b: b, t: t, p: -1, account: static}
	var own []site
	for _, s := range sites {
		// Sites before super()/this() are charged to the caller's account: their own calls.
		if kinds[s.kind].pathable && !pre[s.at] {
			own = append(own, s)
			split[s.at] = true
		} else {
			pc.rest = append(pc.rest, s)
		}
	}
	if len(own) == 0 {
		return nil, nil
	}
	if b.Method.Major < 49 {
		return cc.fallBack(b, transform.SkipPathsOldClass, nil)
	}
	c, err := cfg.Build(b, cm.Dead(), split)
	if err != nil {
		return cc.fallBack(b, fallbackCode(err), err)
	}
	if len(c.Blocks) > maxPathBlocks {
		return cc.fallBack(b, transform.SkipPathsLarge, b.Method.Errorf(-1, "%d blocks, at most %d planned", len(c.Blocks), maxPathBlocks))
	}
	pc.c = c
	g := c.Graph
	for i, s := range own {
		blk := c.Of[s.at]
		if c.Blocks[blk].Last != s.at {
			return nil, b.Method.Errorf(s.off, "internal: site not at its block's end")
		}
		g.Sites[blk] = append(g.Sites[blk], i)
	}
	// No counter before `this` is initialised: the catch-all that corrects does not cover it.
	returns := make([]bool, len(c.Blocks))
	for i, blk := range c.Blocks {
		returns[i] = blk.Returns
		if pre[blk.Last] {
			for _, ed := range g.Out(i) {
				g.Edges[ed].Fixed = true
			}
		}
	}
	if fb, err := e.plan(cc, pc, returns); fb || err != nil {
		return nil, err
	}
	if switchAccount && static < 0 {
		pc.account = cc.account
	}
	if pc.class, err = b.Pool.AddClass(b.Method.Class); err != nil {
		return nil, b.Method.Errorf(-1, "class constant: %w", err)
	}
	for _, s := range own {
		if _, err := nameSite(cc, b, s, lines); err != nil {
			return nil, err
		}
		pc.entries = append(pc.entries, len(cc.method)-1)
	}
	return pc, nil
}

// plan makes pc's plan (step 2 to 6) from the profile's frequencies where it has the method,
// else from static estimates. It reports whether the method falls back to per-site counting.
func (e *countEditor) plan(cc *countClass, pc *pathCount, returns []bool) (fallback bool, err error) {
	b, g := pc.b, pc.c.Graph
	freq := paths.StaticFreq(g, 0, returns)
	cost, how := freq, "estimated"
	if e.opt.Edges {
		pc.keys, pc.hash = pc.c.EdgeKeys(), cc.hash
	}
	if e.opt.Profile != nil {
		key := paths.MethodKey{Class: classfile.JavaName(b.Method.Class), Method: b.Method.Name + b.Method.Desc, Hash: cc.hash}
		if seen, ok, _ := e.opt.Profile.Observed(key, g, pc.c.EdgeKeys()); ok && seen != nil {
			// Observed counts decide; the estimate, far smaller, only orders what the
			// profile saw equally often (edges never taken, above all).
			cost, how = seen, "observed"
			for i := range seen {
				freq[i] = seen[i] + staticWeight*freq[i]
			}
		}
	}
	if pc.plan, err = paths.MakePlan(g, freq, e.opt.Edges); err != nil {
		_, err = cc.fallBack(b, transform.SkipPathsGraph, b.Method.Errorf(-1, "path counters: %w", err))
		return true, err
	}
	// A plan is worth it only when its counters run fewer times than the sites would: where
	// the paths' counters count ahead and a side path takes it back, they cost more. A
	// profiling run keeps every method it can count by paths, to profile it.
	if c, sites := pc.plan.Cost(cost), paths.SiteCost(g, cost); c >= sites && !e.opt.Edges {
		_, err = cc.fallBack(b, transform.SkipPathsCostlier, b.Method.Errorf(-1, "%.2f increments per execution by paths, %.2f by sites (%s)", c, sites, how))
		return true, err
	}
	return false, nil
}

// staticWeight scales the static estimate (per method execution) added to observed counts.
const staticWeight = 1e-6

// maxPathBlocks bounds the graphs planned: semantics are vectors per block.
const maxPathBlocks = 4000

// fallBack notes that the method keeps per-site counting for reason code (err, when set, is
// the detail) and returns what pathCounters then returns.
func (cc *countClass) fallBack(b *code.Body, reason transform.SkipCode, err error) (*pathCount, error) {
	s := transform.Skip{Method: b.Method.Name + b.Method.Desc, Code: reason}
	if err != nil {
		s.Detail = err.Error()
	}
	cc.fallback = &s
	return nil, nil
}

// fallbackCode is the summary's code for a graph cfg.Build could not make.
func fallbackCode(err error) transform.SkipCode {
	switch {
	case errors.Is(err, cfg.ErrSubroutine):
		return transform.SkipPathsSubroutine
	case errors.Is(err, cfg.ErrHandlerReachedNormally):
		return transform.SkipPathsHandler
	}
	return transform.SkipPathsGraph
}

// counter names one counter (or correction) with semantics sem in the class's table and
// returns its ID's pool constant. A chord counter of a profiling run is of kind edge, its TYPE
// prefixed by tag (its edge, its place among the chords, the code's hash).
func (pc *pathCount) counter(sem paths.Vec, tag string) (uint16, error) {
	b := pc.b
	id, err := b.Pool.AddUniqueInteger()
	if err != nil {
		return 0, b.Method.Errorf(-1, "path counter constant: %w", err)
	}
	self := len(pc.cc.method)
	var parts []string
	for _, f := range strings.Fields(sem.Key()) {
		var i, k int
		if _, err := fmt.Sscanf(f, "%d*%d", &i, &k); err != nil {
			return 0, b.Method.Errorf(-1, "internal: semantics %q: %w", f, err)
		}
		parts = append(parts, fmt.Sprintf("%d*%d", pc.entries[i]-self, k))
	}
	kind := accounts.KindPath
	if tag != "" {
		kind = accounts.KindEdge
		parts = append([]string{tag}, parts...)
	}
	pc.cc.method = append(pc.cc.method, pendingSite{id, accounts.Site{Kind: kind, Type: strings.Join(parts, " "), Method: methodName(b), Offset: -1, Line: -1}})
	return id, nil
}

// tag is the TYPE prefix of chord counter i of a profiling run, "" when the run is none.
func (pc *pathCount) tag(i int) string {
	if pc.keys == nil {
		return ""
	}
	k := pc.keys[pc.plan.Counters[i].Edge]
	return fmt.Sprintf("%d>%d %d/%d %s", k.From, k.To, i, len(pc.plan.Counters), pc.hash)
}

// insert names the counters and corrections and inserts their code.
func (pc *pathCount) insert() error {
	b, g, plan := pc.b, pc.c.Graph, pc.plan
	ids := make([]uint16, len(plan.Counters))
	for i, c := range plan.Counters {
		id, err := pc.counter(c.Sem, pc.tag(i))
		if err != nil {
			return err
		}
		ids[i] = id
	}
	for i, v := range plan.Corrections {
		id, err := pc.counter(v, "")
		if err != nil {
			return err
		}
		if i == 0 {
			pc.fix = id
		}
	}
	counted := make([]bool, len(g.Edges))
	for _, c := range plan.Counters {
		counted[c.Edge] = true
	}
	// The progress stores first: a block of one return or athrow gets its store and its exit
	// counter before the same instruction, and the store must come first, or the counter's
	// own store would be undone and a handler correct what the counter counted.
	if len(plan.Corrections) > 0 {
		pc.p = b.NewLocal(1)
		if err := pc.progress(counted); err != nil {
			return err
		}
	}
	for i, c := range plan.Counters {
		if err := pc.onEdge(c.Edge, ids[i]); err != nil {
			return err
		}
	}
	return nil
}

// increment is a counter's code: the call, then the progress local's new class.
func (pc *pathCount) increment(e int, id uint16) *code.Seq {
	return pc.incrementInto(pc.b.Seq(), e, id)
}

func (pc *pathCount) incrementInto(s *code.Seq, e int, id uint16) *code.Seq {
	s.Load(code.ALOAD, pc.t).Int(int32(pc.account)).Ldc(id).Ldc(pc.class).
		InvokeStatic(AcctClass, "path", "("+acctDesc+"IILjava/lang/Class;)"+acctDesc).Store(code.ASTORE, pc.t)
	if pc.p >= 0 {
		s.Int(int32(pc.plan.AfterCounter(pc.c.Graph, e))).Store(code.ISTORE, pc.p)
	}
	return s
}

// onEdge inserts counter id's code on edge e: at the start of its end block when that is
// entered by e alone, else on each arc — after a fall-through, before a goto, return or
// throw, and on a trampoline for a branch or switch target.
func (pc *pathCount) onEdge(e int, id uint16) error {
	b, g := pc.b, pc.c.Graph
	to := g.Edges[e].To
	if to != g.X() && to != pc.c.Entry && !pc.c.Blocks[to].Handler && len(pc.c.Entries(to)) == 1 {
		return b.InsertBefore(pc.c.Blocks[to].First, pc.increment(e, id))
	}
	var tramp *code.Label
	for _, a := range pc.c.Arcs[e] {
		switch a.Kind {
		case cfg.ArcFall:
			if err := b.InsertAfter(a.At, pc.increment(e, id)); err != nil {
				return err
			}
		case cfg.ArcGoto, cfg.ArcExit:
			if err := b.InsertBefore(a.At, pc.increment(e, id)); err != nil {
				return err
			}
		case cfg.ArcBranch:
			if tramp == nil {
				tramp = b.NewLabel()
				dst := pc.retarget(a.At, to, tramp)
				if err := b.Append(pc.incrementInto(b.Seq().Mark(tramp), e, id).Jump(code.GOTO, dst)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// retarget points the branch or switch labels of n that lead to block to at tramp instead,
// and returns the label they had.
func (pc *pathCount) retarget(n *code.Insn, to int, tramp *code.Label) *code.Label {
	var old *code.Label
	swap := func(l **code.Label) {
		if pc.blockAt(*l) == to {
			old, *l = *l, tramp
		}
	}
	if n.Target != nil {
		swap(&n.Target)
	}
	if sw := n.Switch; sw != nil {
		swap(&sw.Default)
		for i := range sw.Targets {
			swap(&sw.Targets[i])
		}
	}
	return old
}

func (pc *pathCount) blockAt(l *code.Label) int {
	n := l.Node()
	for n != nil && n.IsLabel() {
		n = n.Next()
	}
	if blk, ok := pc.c.Of[n]; ok {
		return blk
	}
	return -1
}

// progress writes the progress local where the deficit class changes: at the start of each
// block that some uncounted edge enters from a block of another class (a counter's code sets
// it itself), and in each handler, which corrects first and then starts from class 0.
func (pc *pathCount) progress(counted []bool) error {
	b, g, plan := pc.b, pc.c.Graph, pc.plan
	for i, blk := range pc.c.Blocks {
		if blk.Handler {
			s := b.Seq()
			pc.Unwind(s)
			if err := b.InsertBefore(blk.First, s.Int(0).Store(code.ISTORE, pc.p)); err != nil {
				return err
			}
			continue
		}
		need := false
		for _, e := range g.In(i) {
			from := g.Edges[e].From
			switch {
			case from == g.X():
				need = need || plan.Class[i] != 0
			case !counted[e]:
				need = need || plan.Class[from] != plan.Class[i]
			}
		}
		if need {
			if err := b.InsertBefore(blk.First, b.Seq().Int(int32(plan.Class[i])).Store(code.ISTORE, pc.p)); err != nil {
				return err
			}
		}
	}
	return nil
}

// start sets the progress local to class 0 at the very start, before every handler's range.
func (pc *pathCount) start() error {
	if pc.p < 0 {
		return nil
	}
	return pc.b.InsertAfter(nil, pc.b.Seq().Int(0).Store(code.ISTORE, pc.p))
}

// needsUnwind reports whether an exception can leave the method owing a correction.
func (pc *pathCount) needsUnwind() bool { return pc.p >= 0 }

// Unwind adds the correction of the class the progress local holds (nothing for class 0).
func (pc *pathCount) Unwind(s *code.Seq) {
	if pc.p < 0 {
		return
	}
	s.Load(code.ALOAD, pc.t).Int(int32(pc.account)).Ldc(pc.fix).Load(code.ILOAD, pc.p).Ldc(pc.class).
		InvokeStatic(AcctClass, "fix", "("+acctDesc+"IIILjava/lang/Class;)"+acctDesc).Store(code.ASTORE, pc.t)
}

// Enter and Exit add nothing: a method without an account switch gets the catch-all for the
// correction alone.
func (pc *pathCount) Enter(*code.Seq)            {}
func (pc *pathCount) Exit(*code.Seq, *code.Insn) {}

// codeHash names method m's original code in profiles: a digest of its bytecode and exception
// table, so that a profile taken of other code is never applied to it ("" when the code cannot
// be read, which matches no profile entry).
func codeHash(cf *classfile.Class, m *classfile.Member) string {
	c, _, err := cf.MethodCode(m)
	if err != nil || c == nil {
		return ""
	}
	h := sha256.New()
	h.Write(c.Bytecode)
	for _, x := range c.Exceptions {
		binary.Write(h, binary.BigEndian, [4]uint16{x.StartPC, x.EndPC, x.HandlerPC, x.CatchType})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
