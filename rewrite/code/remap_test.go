package code

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// semantics renders what must survive any padding of a body with nops: the instructions other
// than nop, each branch and switch target, exception-table entry, line-number start,
// local-variable range and type-annotation offset as an index into that instruction list.
// Widened forms read as the originals: goto_w as goto, jsr_w as jsr, and an inverted
// conditional jumping over a goto or goto_w as the conditional to the goto's target.
func semantics(b *Body) string {
	over := map[*Insn]*Insn{} // inverted conditional → the goto it jumps over
	hidden := map[*Insn]bool{}
	nextReal := func(n *Insn, labels bool) *Insn { // skipping nops, and labels if asked
		for n = n.Next(); n != nil && (n.Op == NOP || (labels && n.IsLabel())); n = n.Next() {
		}
		return n
	}
	for n := b.First(); n != nil; n = n.Next() {
		// javac writes this shape too (with a short goto), so both sides are normalised.
		if !IsConditional(n.Op) {
			continue
		}
		g := nextReal(n, false)
		if g == nil || (g.Op != GOTO_W && g.Op != GOTO) {
			continue
		}
		for l := g.Next(); l != nil && (l.IsLabel() || l.Op == NOP); l = l.Next() {
			if l.Label == n.Target {
				over[n], hidden[g] = g, true
			}
		}
	}
	skip := func(n *Insn) bool { return n.IsLabel() || n.Op == NOP || hidden[n] }
	idx := map[*Label]int{}
	k := 0
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			idx[n.Label] = k
		} else if !skip(n) {
			k++
		}
	}
	name := func(op Opcode) string {
		switch op {
		case GOTO_W:
			op = GOTO
		case JSR_W:
			op = JSR
		}
		return OpName(op)
	}
	insnIdx := map[*Insn]int{}
	var sb strings.Builder
	k = 0
	for n := b.First(); n != nil; n = n.Next() {
		if skip(n) {
			continue
		}
		insnIdx[n] = k
		k++
		switch {
		case over[n] != nil:
			fmt.Fprintf(&sb, "%s ->%d\n", name(opposite[n.Op]), idx[over[n].Target])
		case n.Target != nil:
			fmt.Fprintf(&sb, "%s ->%d\n", name(n.Op), idx[n.Target])
		case n.Switch != nil:
			fmt.Fprintf(&sb, "%s %d %v ->%d", OpName(n.Op), n.Switch.Low, n.Switch.Keys, idx[n.Switch.Default])
			for _, l := range n.Switch.Targets {
				fmt.Fprintf(&sb, " ->%d", idx[l])
			}
			sb.WriteByte('\n')
		default:
			sb.WriteString(n.String() + "\n")
		}
	}
	for _, h := range b.Handlers {
		fmt.Fprintf(&sb, "handler [%d,%d) ->%d %d\n", idx[h.Start], idx[h.End], idx[h.Handler], h.CatchType)
	}
	for _, a := range b.Attrs {
		switch a.Kind {
		case AttrLineNumbers:
			for _, l := range a.Lines {
				fmt.Fprintf(&sb, "line %d at %d\n", l.Line, idx[l.Start])
			}
		case AttrLocalVars, AttrLocalVarTypes:
			for _, v := range a.Vars {
				fmt.Fprintf(&sb, "var %d %d %d [%d,%d)\n", v.Name, v.Desc, v.Index, idx[v.Start], idx[v.End])
			}
		case AttrVisibleTypeAnnotations, AttrInvisibleTypeAnnotations:
			for _, ta := range a.Annos {
				fmt.Fprintf(&sb, "anno %x %d", ta.TargetType, ta.ExceptionIndex)
				for _, r := range ta.Ranges {
					fmt.Fprintf(&sb, " [%d,%d) %d", idx[r.Start], idx[r.End], r.Index)
				}
				if ta.Insn != nil {
					fmt.Fprintf(&sb, " at %d", insnIdx[ta.Insn])
				}
				fmt.Fprintf(&sb, " %x\n", ta.Rest)
			}
		}
	}
	return sb.String()
}

// TestRemapRealMethods pads real methods with nops at random places (seeded, so failures
// repeat) and checks that every offset-bearing part of the code still means the same thing.
// Small pads move switch padding; 33 KB inside a branch's span forces widening. The
// StackMapTable is left out: this is about this package's remapping, not frames.
func TestRemapRealMethods(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, jar := range []string{"guava.jar", "eclipse-ecj.jar"} {
		path := needJar(t, jar)
		methods, widened, tooLarge := 0, 0, 0
		eachMethod(t, path, func(jm *jarMethod) {
			methods++
			b, err := Decode(jm.code, jm.class.Pool, jm.info)
			if err != nil {
				t.Fatal(err)
			}
			var kept []*Attr
			for _, a := range b.Attrs {
				if a.Kind != AttrStackMap {
					kept = append(kept, a)
				}
			}
			b.Attrs = kept
			want := semantics(b)
			wides := countOp(b, GOTO_W) + countOp(b, JSR_W)
			var insns, branches []*Insn
			for n := b.First(); n != nil; n = n.Next() {
				if !n.IsLabel() {
					insns = append(insns, n)
				}
				if n.Target != nil || n.Switch != nil {
					branches = append(branches, n)
				}
			}
			for k := 0; k < 1+rng.Intn(3); k++ {
				b.InsertBefore(insns[rng.Intn(len(insns))], nops(b, 1+rng.Intn(3)))
			}
			// Every 20th method with branches: 33 KB inside one branch's span, so it widens.
			// The pad goes where it cannot split javac's "conditional; goto; label" idiom,
			// which semantics reads as one conditional.
			if len(branches) > 0 && methods%20 == 0 {
				if x := padPlace(branches[rng.Intn(len(branches))]); x != nil {
					b.InsertBefore(x, nops(b, 33000))
				}
			}
			c, err := b.Encode()
			if err != nil {
				if errors.Is(err, ErrCodeTooLarge) {
					tooLarge++
					return
				}
				t.Fatalf("%s: %v", jm.info, err)
			}
			re, err := Decode(c, jm.class.Pool, jm.info)
			if err != nil {
				t.Fatalf("%s: re-decode: %v", jm.info, err)
			}
			if countOp(re, GOTO_W)+countOp(re, JSR_W) > wides {
				widened++
			}
			if got := semantics(re); got != want {
				t.Fatalf("%s: meaning changed after padding:\n got:\n%s\nwant:\n%s", jm.info, got, want)
			}
			if ms, ml, err := re.ComputeMax(); err != nil || ms > int(c.MaxStack) || ml > int(c.MaxLocals) {
				t.Fatalf("%s: encoded max_stack %d max_locals %d, needed %d %d (%v)", jm.info, c.MaxStack, c.MaxLocals, ms, ml, err)
			}
		})
		if widened == 0 {
			t.Errorf("%s: no method widened", jar)
		}
		t.Logf("%s: %d methods padded, %d of them widened, %d refused as too large", jar, methods, widened, tooLarge)
	}
}

func countOp(b *Body, op Opcode) int {
	k := 0
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op == op {
			k++
		}
	}
	return k
}

// padPlace returns an instruction strictly inside the span of branch n (between it and its
// target, or its default for a switch) before which padding does not separate a conditional
// from a goto after it, or nil when there is none.
func padPlace(n *Insn) *Insn {
	target := n.Target
	if target == nil {
		target = n.Switch.Default
	}
	var span []*Insn
	if target.Offset > n.Offset {
		for x := n.Next(); x != nil && x != target.Node(); x = x.Next() {
			span = append(span, x)
		}
	} else {
		for x := target.Node(); x != nil && x != n; x = x.Next() {
			span = append(span, x)
		}
	}
	var ok []*Insn
	for _, x := range span {
		if x.IsLabel() || x.Op == GOTO || x.Op == GOTO_W {
			continue
		}
		p := x.Prev()
		for p != nil && p.IsLabel() {
			p = p.Prev()
		}
		if p != nil && (IsConditional(p.Op) || p.Op == GOTO || p.Op == GOTO_W) {
			continue
		}
		ok = append(ok, x)
	}
	if len(ok) == 0 {
		return nil
	}
	return ok[len(ok)/2]
}
