// Package cfg builds the control-flow graph of a decoded method (rewrite/code) for the path
// counters of package paths: basic blocks, their normal edges (fall-through, branches, switch
// targets, returns and throws to the virtual node X) and the handlers as roots (X→handler).
// Exceptional edges are not edges of the graph: the path counters correct an exception where
// it is caught (paths, step 6). Methods with subroutines (jsr/ret, class files before version
// 51) have no such graph and are refused with ErrSubroutine.
package cfg

import (
	"errors"

	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/paths"
)

// ErrSubroutine is the cause when a method uses jsr or ret.
var ErrSubroutine = errors.New("jsr/ret subroutine")

// ErrHandlerReachedNormally is the cause when an exception handler's first instruction is also
// reached by normal flow: its correction would run on that flow too.
var ErrHandlerReachedNormally = errors.New("exception handler also reached by normal flow")

// Block is a basic block: its first and last instruction in the body's list.
type Block struct {
	First, Last *code.Insn
	Handler     bool // an exception handler starts here
	Returns     bool // it ends in a return
}

// ArcKind says how control takes one arc of an edge, which says where code on the edge goes.
type ArcKind uint8

const (
	ArcFall   ArcKind = iota // falls through after Last: code goes right after it
	ArcGoto                  // Last is goto: code goes before it
	ArcBranch                // Last is a conditional branch or switch whose target is the edge's end: code goes on a trampoline
	ArcExit                  // Last returns or throws: code goes before it
)

// Arc is one way control takes an edge; parallel arcs (a switch's cases to one block, a
// branch to the block it falls through to) make one edge.
type Arc struct {
	Kind ArcKind
	At   *code.Insn // the source block's last instruction
}

// CFG is a method's graph with what the count pass needs to place code on it.
type CFG struct {
	Graph  *paths.Graph
	Blocks []Block
	Arcs   [][]Arc // by edge
	Entry  int
	Of     map[*code.Insn]int // the block of each live instruction
}

// Build returns the graph of b's live code (dead holds the unreached instructions). A block
// also ends right after each instruction of split (where an allocation site completes), so
// that a block completes at most one site and only at its end.
func Build(b *code.Body, dead, split map[*code.Insn]bool) (*CFG, error) {
	c := &CFG{Of: map[*code.Insn]int{}}
	targets := map[*code.Label]bool{}
	handlers := map[*code.Label]bool{}
	for n := b.First(); n != nil; n = n.Next() {
		switch {
		case n.Op == code.JSR || n.Op == code.JSR_W || n.Op == code.RET:
			return nil, b.Method.Errorf(n.Offset, "%w", ErrSubroutine)
		case n.Target != nil:
			targets[n.Target] = true
		case n.Switch != nil:
			targets[n.Switch.Default] = true
			for _, l := range n.Switch.Targets {
				targets[l] = true
			}
		}
	}
	for _, h := range b.Handlers {
		handlers[h.Handler] = true
	}
	c.blocks(b, dead, split, targets, handlers)
	if len(c.Blocks) == 0 {
		return nil, b.Method.Errorf(-1, "no live code")
	}
	g := &paths.Graph{N: len(c.Blocks), Sites: make([][]int, len(c.Blocks))}
	c.Graph = g
	g.AddEdge(g.X(), 0, true)
	for i := range c.Blocks {
		if c.Blocks[i].Handler {
			g.AddEdge(g.X(), i, true)
		}
	}
	for i := range c.Blocks {
		if err := c.edges(b, i); err != nil {
			return nil, err
		}
	}
	for i, blk := range c.Blocks {
		if blk.Handler && i != 0 && len(g.In(i)) > 1 {
			return nil, b.Method.Errorf(blk.First.Offset, "%w", ErrHandlerReachedNormally)
		}
	}
	return c, nil
}

// blocks cuts the live instructions into basic blocks.
func (c *CFG) blocks(b *code.Body, dead, split map[*code.Insn]bool, targets, handlers map[*code.Label]bool) {
	cut, handler := true, false
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			if targets[n.Label] || handlers[n.Label] {
				cut = true
			}
			handler = handler || handlers[n.Label]
			continue
		}
		if dead[n] {
			cut, handler = true, false
			continue
		}
		if cut || len(c.Blocks) == 0 {
			c.Blocks = append(c.Blocks, Block{First: n, Handler: handler})
			cut, handler = false, false
		}
		blk := &c.Blocks[len(c.Blocks)-1]
		blk.Last = n
		c.Of[n] = len(c.Blocks) - 1
		if code.EndsFlow(n.Op) || code.IsBranch(n.Op) || split[n] {
			cut = true
		}
		blk.Returns = n.Op >= code.IRETURN && n.Op <= code.RETURN
	}
}

// edges adds the normal edges out of block i, with their arcs.
func (c *CFG) edges(b *code.Body, i int) error {
	g := c.Graph
	last := c.Blocks[i].Last
	add := func(to int, a Arc) {
		e := g.AddEdge(i, to, false)
		for len(c.Arcs) <= e {
			c.Arcs = append(c.Arcs, nil)
		}
		c.Arcs[e] = append(c.Arcs[e], a)
	}
	label := func(l *code.Label) (int, error) {
		n := l.Node()
		for n != nil && n.IsLabel() {
			n = n.Next()
		}
		to, ok := c.Of[n]
		if !ok {
			return 0, b.Method.Errorf(last.Offset, "branch to code that is not live")
		}
		return to, nil
	}
	switch {
	case last.Op == code.ATHROW || last.Op >= code.IRETURN && last.Op <= code.RETURN:
		add(g.X(), Arc{ArcExit, last})
		return nil
	case last.Switch != nil:
		for _, l := range append([]*code.Label{last.Switch.Default}, last.Switch.Targets...) {
			to, err := label(l)
			if err != nil {
				return err
			}
			add(to, Arc{ArcBranch, last})
		}
		return nil
	case last.Op == code.GOTO || last.Op == code.GOTO_W:
		to, err := label(last.Target)
		if err != nil {
			return err
		}
		add(to, Arc{ArcGoto, last})
		return nil
	case code.IsBranch(last.Op):
		to, err := label(last.Target)
		if err != nil {
			return err
		}
		add(to, Arc{ArcBranch, last})
	}
	if i+1 >= len(c.Blocks) {
		return b.Method.Errorf(last.Offset, "control falls off the end of the code")
	}
	add(i+1, Arc{ArcFall, last})
	return nil
}

// Entries are the normal edges that enter block i (the virtual X→i edge left out).
func (c *CFG) Entries(i int) []int {
	var out []int
	for _, e := range c.Graph.In(i) {
		if c.Graph.Edges[e].From != c.Graph.X() {
			out = append(out, e)
		}
	}
	return out
}

// Start returns where block i starts in the original code: the offset of its first original
// instruction (of the first one after it, for a block of inserted code alone), -1 for X. It
// names the block across rewrites of the same code (a profile's edges, paths.EdgeKey).
func (c *CFG) Start(i int) int {
	if i >= len(c.Blocks) {
		return -1
	}
	for n := c.Blocks[i].First; n != nil; n = n.Next() {
		if !n.IsLabel() && n.Offset >= 0 {
			return n.Offset
		}
	}
	return -1
}

// EdgeKeys returns the key of every edge of the graph, by edge index.
func (c *CFG) EdgeKeys() []paths.EdgeKey {
	keys := make([]paths.EdgeKey, len(c.Graph.Edges))
	for i, e := range c.Graph.Edges {
		keys[i] = paths.EdgeKey{From: c.Start(e.From), To: c.Start(e.To)}
	}
	return keys
}
