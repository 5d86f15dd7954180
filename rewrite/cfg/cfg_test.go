package cfg

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// body decodes hand-written bytecode of a static method of a version-49 class.
func body(t *testing.T, bc []byte, handlers ...classfile.ExceptionEntry) *code.Body {
	t.Helper()
	pool := &classfile.Pool{Entries: make([]classfile.Constant, 1)}
	m := code.Method{Class: "T", Name: "m", Desc: "(I)I", Access: classfile.AccStatic, Major: 49}
	b, err := code.Decode(&classfile.Code{MaxStack: 4, MaxLocals: 4, Bytecode: bc, Exceptions: handlers}, pool, m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// at returns the set of instructions at the given offsets.
func at(t *testing.T, b *code.Body, offs ...int) map[*code.Insn]bool {
	t.Helper()
	s := map[*code.Insn]bool{}
	for _, o := range offs {
		n := b.InsnAt(o)
		if n == nil {
			t.Fatalf("no instruction at offset %d", o)
		}
		s[n] = true
	}
	return s
}

// blocks renders each block as "FIRST-LAST" offsets, with "h" for a handler and "r" for one
// that returns.
func blocks(c *CFG) string {
	var out []string
	for _, b := range c.Blocks {
		s := fmt.Sprintf("%d-%d", b.First.Offset, b.Last.Offset)
		if b.Handler {
			s += "h"
		}
		if b.Returns {
			s += "r"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// edges renders the graph's edges as "FROM>TO" with X for the virtual node, "!" on fixed ones
// and each arc's kind (f fall, g goto, b branch, x exit), sorted.
func edges(c *CFG) string {
	g := c.Graph
	name := func(n int) string {
		if n == g.X() {
			return "X"
		}
		return fmt.Sprint(n)
	}
	var out []string
	for i, e := range g.Edges {
		s := name(e.From) + ">" + name(e.To)
		if e.Fixed {
			s += "!"
		}
		if i < len(c.Arcs) {
			for _, a := range c.Arcs[i] {
				s += string("fgbx"[a.Kind])
			}
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func check(t *testing.T, c *CFG, wantBlocks, wantEdges string) {
	t.Helper()
	if got := blocks(c); got != wantBlocks {
		t.Errorf("blocks %q, want %q", got, wantBlocks)
	}
	if got := edges(c); got != wantEdges {
		t.Errorf("edges %q, want %q", got, wantEdges)
	}
	for n, blk := range c.Of {
		if b := c.Blocks[blk]; n.Offset < b.First.Offset || n.Offset > b.Last.Offset {
			t.Errorf("instruction at %d mapped to block %d (%d-%d)", n.Offset, blk, b.First.Offset, b.Last.Offset)
		}
	}
}

// An if/else that joins: the branch's target and its fall-through are two edges, the goto a
// third, and the return leaves for X.
func TestDiamond(t *testing.T) {
	b := body(t, []byte{
		byte(code.ILOAD_0),    // 0
		byte(code.IFEQ), 0, 8, // 1 → 9
		byte(code.ICONST_1),   // 4
		byte(code.ISTORE_1),   // 5
		byte(code.GOTO), 0, 5, // 6 → 11
		byte(code.ICONST_2), // 9
		byte(code.ISTORE_1), // 10
		byte(code.ILOAD_1),  // 11
		byte(code.IRETURN),  // 12
	})
	c, err := Build(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, c, "0-1 4-6 9-10 11-12r", "0>1f 0>2b 1>3g 2>3f 3>Xx X>0!")
	if got := c.Entries(3); len(got) != 2 {
		t.Errorf("block 3 entered by %d normal edges, want 2", len(got))
	}
	if got := c.Entries(0); len(got) != 0 {
		t.Errorf("the entry block is entered by %d normal edges (X→0 is not one)", len(got))
	}
}

// A block also ends right after each instruction of split (a site's allocating call).
func TestSplitAfterSite(t *testing.T) {
	bc := []byte{byte(code.ICONST_1), byte(code.ISTORE_1), byte(code.ICONST_2), byte(code.ISTORE_2), byte(code.ILOAD_1), byte(code.IRETURN)}
	b := body(t, bc)
	c, err := Build(b, nil, at(t, b, 1, 3))
	if err != nil {
		t.Fatal(err)
	}
	check(t, c, "0-1 2-3 4-5r", "0>1f 1>2f 2>Xx X>0!")
}

// A tableswitch: one edge per target block, cases that share a block are arcs of one edge, the
// default is an edge too.
func TestSwitchTargets(t *testing.T) {
	bc := []byte{
		byte(code.ILOAD_0),           // 0
		byte(code.TABLESWITCH), 0, 0, // 1, padded to 4
		0, 0, 0, 31, // default → 32
		0, 0, 0, 0, // low 0
		0, 0, 0, 2, // high 2
		0, 0, 0, 27, // 0 → 28
		0, 0, 0, 29, // 1 → 30
		0, 0, 0, 27, // 2 → 28
		byte(code.ICONST_0), byte(code.IRETURN), // 28
		byte(code.ICONST_1), byte(code.IRETURN), // 30
		byte(code.ICONST_2), byte(code.IRETURN), // 32
	}
	b := body(t, bc)
	c, err := Build(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, c, "0-1 28-29r 30-31r 32-33r", "0>1bb 0>2b 0>3b 1>Xx 2>Xx 3>Xx X>0!")
}

// A handler is a root (a fixed edge from X) and no normal edge enters it: the code it covers
// has no edge to it (exceptions are corrected where they are caught).
func TestHandlerIsRoot(t *testing.T) {
	bc := []byte{
		byte(code.ILOAD_0), byte(code.ICONST_1), byte(code.IDIV), byte(code.IRETURN), // 0-3
		byte(code.POP), byte(code.ICONST_M1), byte(code.IRETURN), // 4-6
	}
	b := body(t, bc, classfile.ExceptionEntry{StartPC: 0, EndPC: 4, HandlerPC: 4})
	c, err := Build(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, c, "0-3r 4-6hr", "0>Xx 1>Xx X>0! X>1!")
}

// A handler whose first instruction normal flow also reaches is refused: its correction would
// run on that flow too.
func TestHandlerReachedNormallyRefused(t *testing.T) {
	bc := []byte{byte(code.ACONST_NULL), byte(code.ASTORE_1), byte(code.ALOAD_1), byte(code.ARETURN)}
	b := body(t, bc, classfile.ExceptionEntry{StartPC: 0, EndPC: 2, HandlerPC: 2})
	if _, err := Build(b, nil, nil); !errors.Is(err, ErrHandlerReachedNormally) {
		t.Fatalf("got %v, want %v", err, ErrHandlerReachedNormally)
	}
}

// jsr/ret subroutines have no graph of this kind: refused with ErrSubroutine, at the offset.
func TestSubroutineRefused(t *testing.T) {
	bc := []byte{
		byte(code.JSR), 0, 4, // 0 → 4
		byte(code.RETURN),   // 3
		byte(code.ASTORE_1), // 4
		byte(code.RET), 1,   // 5
	}
	_, err := Build(body(t, bc), nil, nil)
	if !errors.Is(err, ErrSubroutine) {
		t.Fatalf("got %v, want %v", err, ErrSubroutine)
	}
	if !strings.Contains(err.Error(), "offset 0") {
		t.Errorf("error %q does not name the jsr's offset", err)
	}
}

// Dead code is in no block; code that runs off its end is refused.
func TestDeadAndFallingOff(t *testing.T) {
	b := body(t, []byte{byte(code.ICONST_0), byte(code.IRETURN), byte(code.ICONST_1), byte(code.IRETURN)})
	c, err := Build(b, at(t, b, 2, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, c, "0-1r", "0>Xx X>0!")
	b = body(t, []byte{byte(code.ICONST_0), byte(code.POP)})
	if _, err := Build(b, nil, nil); err == nil || !strings.Contains(err.Error(), "falls off") {
		t.Fatalf("code falling off its end: %v", err)
	}
}

// A loop: its back edge is a goto to the header, and the header's test branches out.
func TestLoopBackEdge(t *testing.T) {
	bc := []byte{
		byte(code.ICONST_0), byte(code.ISTORE_1), // 0
		byte(code.ILOAD_1), byte(code.ILOAD_0), byte(code.IF_ICMPGE), 0, 9, // 2: → 13
		byte(code.IINC), 1, 1, // 7
		byte(code.GOTO), 0xff, 0xf8, // 10 → 2
		byte(code.ILOAD_1), byte(code.IRETURN), // 13
	}
	c, err := Build(body(t, bc), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, c, "0-1 2-4 7-10 13-14r", "0>1f 1>2f 1>3b 2>1g 3>Xx X>0!")
}
