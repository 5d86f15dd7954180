package commons

import (
	"errors"
	"testing"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// advice is a commons.Advice of functions, for tests.
type advice struct {
	enter, unwind func(*code.Seq)
	exit          func(*code.Seq, *code.Insn)
}

func (a advice) Enter(s *code.Seq)                { a.enter(s) }
func (a advice) Exit(s *code.Seq, ret *code.Insn) { a.exit(s, ret) }
func (a advice) Unwind(s *code.Seq)               { a.unwind(s) }

// ctor decodes a constructor T.<init>(I)V of class file version 49 (no frames to keep) that
// calls super() on either of two paths and has a dead tail:
//
//	0: iload_1   1: ifeq 11   4: aload_0   5: invokespecial Object.<init>   8: goto 15
//	11: aload_0  12: invokespecial Object.<init>   15: return   16: aconst_null   17: athrow
func ctor(t *testing.T) *Method {
	t.Helper()
	pool := &classfile.Pool{Entries: make([]classfile.Constant, 1)}
	init, err := pool.AddMethodref("java/lang/Object", "<init>", "()V", false)
	if err != nil {
		t.Fatal(err)
	}
	hi, lo := byte(init>>8), byte(init)
	bc := []byte{0x1b, 0x99, 0, 10, 0x2a, 0xb7, hi, lo, 0xa7, 0, 7, 0x2a, 0xb7, hi, lo, 0xb1, 0x01, 0xbf}
	m := code.Method{Class: "T", Name: "<init>", Desc: "(I)V", Major: 49}
	b, err := code.Decode(&classfile.Code{MaxStack: 2, MaxLocals: 2, Bytecode: bc}, pool, m)
	if err != nil {
		t.Fatal(err)
	}
	return NewMethod(b)
}

// TestWrapConstructor: entry after super() on both paths, exit before the one live return,
// nothing in dead code, and a handler that covers neither code before super(), nor the entry
// sequences, nor the dead tail — and the constructor analysis runs once for all of it.
func TestWrapConstructor(t *testing.T) {
	m := ctor(t)
	b := m.Body
	an, err := m.Constructors()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := m.Constructors(); again != an || len(an.Calls) != 2 {
		t.Fatalf("analysis %p then %p, %d super() calls", an, again, len(an.Calls))
	}
	orig := map[int]*code.Insn{}
	for n := b.First(); n != nil; n = n.Next() {
		if !n.IsLabel() {
			orig[n.Offset] = n
		}
	}
	token := b.NewLocal(1)
	w, err := Wrap(m, advice{
		enter:  func(s *code.Seq) { s.Op(code.ICONST_1).Store(code.ISTORE, token) },
		exit:   func(s *code.Seq, _ *code.Insn) { s.Load(code.ILOAD, token).Op(code.POP) },
		unwind: func(s *code.Seq) { s.Load(code.ILOAD, token).Op(code.POP) },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{0, 1, 4, 5, 11, 12} {
		if !w.BeforeInit[orig[off]] {
			t.Errorf("offset %d runs before super() but is not in BeforeInit", off)
		}
	}
	if w.BeforeInit[orig[15]] {
		t.Error("the return runs after super() on every path")
	}
	// Every super() call is followed by the entry; the return by nothing, preceded by the exit.
	for _, off := range []int{5, 12} {
		if n := orig[off].Next(); n == nil || n.Op != code.ICONST_1 {
			t.Errorf("no entry after the super() call at %d", off)
		}
	}
	if p := orig[15].Prev(); p == nil || p.Op != code.POP {
		t.Error("no exit before the return")
	}
	p := orig[16].Prev()
	for p != nil && p.IsLabel() {
		p = p.Prev() // a handler range may end there
	}
	if p != orig[15] || orig[16].Next() != orig[17] {
		t.Error("something was inserted into the dead tail")
	}
	c, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	again, err := code.Decode(c, b.Pool, b.Method)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Exceptions) == 0 {
		t.Fatal("no handler")
	}
	// In the re-decoded code: the handler ranges hold no invokespecial, no iload_1 or ifeq of
	// the prologue, no entry (iconst_1) and no dead aconst_null.
	for _, h := range again.Handlers {
		for n := h.Start.Node(); n != nil && n != h.End.Node(); n = n.Next() {
			switch n.Op {
			case code.INVOKESPECIAL, code.ILOAD_1, code.IFEQ, code.ICONST_1, code.ACONST_NULL:
				t.Errorf("handler [%d, %d) covers %s", h.Start.Offset, h.End.Offset, n)
			}
		}
		if first := h.Handler.Node().Next(); first == nil || first.Op != code.ILOAD_2 {
			t.Errorf("handler code starts with %v", first)
		}
	}
}

// TestWrapRefusesConstructorWithoutSuper: a constructor no path of which calls super() or
// this() has no point to enter at; Wrap says so with ErrNoInitCall and inserts no entry.
func TestWrapRefusesConstructorWithoutSuper(t *testing.T) {
	pool := &classfile.Pool{Entries: make([]classfile.Constant, 1)}
	b, err := code.Decode(&classfile.Code{MaxStack: 1, MaxLocals: 1, Bytecode: []byte{0xb1}}, pool,
		code.Method{Class: "T", Name: "<init>", Desc: "()V", Major: 49})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Wrap(NewMethod(b), advice{enter: func(*code.Seq) {}, exit: func(*code.Seq, *code.Insn) {}, unwind: func(*code.Seq) {}})
	var ce *code.Error
	if !errors.Is(err, ErrNoInitCall) || !errors.As(err, &ce) || ce.Method.Name != "<init>" {
		t.Fatalf("error %v", err)
	}
}

// TestWrapStopsAtAFailedSequence: advice whose sequence failed to build is not inserted, and
// Wrap returns its error.
func TestWrapStopsAtAFailedSequence(t *testing.T) {
	m := ctor(t)
	_, err := Wrap(m, advice{
		enter:  func(s *code.Seq) { s.Op(code.ILOAD) }, // iload needs an operand
		exit:   func(*code.Seq, *code.Insn) {},
		unwind: func(*code.Seq) {},
	})
	if err == nil {
		t.Fatal("a failed entry sequence was accepted")
	}
	for n := m.Body.First(); n != nil; n = n.Next() {
		if n.Op == code.ILOAD && n.Offset < 0 {
			t.Fatal("part of the failed sequence was inserted")
		}
	}
}
