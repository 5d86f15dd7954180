package code

// Reach numbers the body (Number) and returns, by node number, the instructions reachable from the
// start of the method, following branches, switches, subroutine calls and exception edges, and
// not going past the instructions in stop (which are themselves reached).
func (b *Body) Reach(stop map[*Insn]bool) []bool {
	seen := make([]bool, b.Number())
	// Exception edges: an instruction inside [Start, End) may jump to Handler, by list position.
	type span struct{ from, to int }
	spans := make([]span, len(b.Handlers))
	for k, h := range b.Handlers {
		spans[k] = span{-1, -1}
		if h.Start.Node() != nil && h.End.Node() != nil {
			spans[k] = span{h.Start.Node().Num(), h.End.Node().Num()}
		}
	}
	var work []*Insn
	push := func(n *Insn) {
		for n != nil && n.IsLabel() {
			n = n.Next()
		}
		if n != nil && !seen[n.Num()] {
			seen[n.Num()] = true
			work = append(work, n)
		}
	}
	pushLabel := func(l *Label) {
		if l != nil && l.Node() != nil {
			push(l.Node())
		}
	}
	push(b.First())
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		for k, sp := range spans {
			if p := n.Num(); p >= sp.from && p < sp.to {
				pushLabel(b.Handlers[k].Handler)
			}
		}
		if stop[n] {
			continue // a constructor's super()/this(): `this` is initialised past it on this path
		}
		if n.Target != nil {
			pushLabel(n.Target)
		}
		if n.Switch != nil {
			pushLabel(n.Switch.Default)
			for _, l := range n.Switch.Targets {
				pushLabel(l)
			}
		}
		if !EndsFlow(n.Op) {
			push(n.Next())
		}
	}
	return seen
}

// Unreached returns the instructions no path from the method's start reaches (Reach), nil when
// there are none, as they are in compiled code.
func (b *Body) Unreached() map[*Insn]bool {
	live := b.Reach(nil)
	var out map[*Insn]bool
	for n := b.First(); n != nil; n = n.Next() {
		if !n.IsLabel() && !live[n.Num()] {
			if out == nil {
				out = map[*Insn]bool{}
			}
			out[n] = true
		}
	}
	return out
}
