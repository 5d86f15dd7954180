package commons

import (
	"github.com/heapledger/heapledger/rewrite/code"
)

// cover adds the catch-all handler over every part of the body that may be covered: the code
// after the entry sequences (which end at the labels in starts) up to end, less any code that
// can run before `this` is initialised in a constructor (pre). The JVM rejects a handler that
// covers such code unless its frame says `this` is uninitialised, and then the handler could
// neither use `this` nor return; so that code is left out, and an exception there leaves the
// constructor without entering it (Enter runs only after super()/this()).
//
// Ranges are computed over the node list: an instruction is excluded when it runs before `this`
// is initialised, is dead, or is part of an entry sequence. Each maximal run of the remaining
// instructions between the first start and end becomes one entry of the exception table,
// appended after the program's own entries so that those keep catching first.
//
// Dead code is left out (dead, Method.Dead): the JVM checks it against the handlers that cover
// it by the compiler's frame there, and the dead tails ASM-based compilers leave (`nop … athrow`
// under a frame with no locals) have none of the locals the handler reads.
func cover(b *code.Body, starts []*code.Label, end, handler *code.Label, inits []*code.Insn, pre, dead map[*code.Insn]bool) error {
	if len(starts) == 0 {
		return b.Method.Errorf(-1, "no entry point to cover from")
	}
	if len(inits) == 0 && len(starts) == 1 && len(dead) == 0 {
		// Not a constructor: everything from the entry sequence to the end is covered.
		b.AddHandler(starts[0], end, handler, 0)
		return nil
	}
	excluded := func(n *code.Insn) bool { return pre[n] || dead[n] }
	// Entry sequences: from each initialising call (or the method start) to its start label.
	inEntry := false
	isStart := map[*code.Label]bool{}
	for _, l := range starts {
		isStart[l] = true
	}
	type run struct{ from, to *code.Insn } // first instruction, first node after
	var runs []run
	var open *code.Insn
	endNode := end.Node()
	entryBegins := map[*code.Insn]bool{}
	for _, s := range inits {
		entryBegins[s] = true
	}
	if len(inits) == 0 {
		inEntry = true // the method starts with the entry sequence
	}
	for n := b.First(); n != nil && n != endNode; n = n.Next() {
		if n.IsLabel() {
			if isStart[n.Label] {
				inEntry = false
			}
			continue
		}
		cover := !inEntry && !excluded(n)
		if entryBegins[n] {
			inEntry = true // the call itself runs on an uninitialised `this`; so does the entry after it
		}
		switch {
		case cover && open == nil:
			open = n
		case !cover && open != nil:
			runs = append(runs, run{open, n})
			open = nil
		}
	}
	if open != nil {
		runs = append(runs, run{open, endNode})
	}
	for _, r := range runs {
		from, to := b.NewLabel(), b.NewLabel()
		if err := b.InsertBefore(r.from, b.Seq().Mark(from)); err != nil {
			return err
		}
		if r.to == endNode {
			to = end
		} else {
			if err := b.InsertBefore(r.to, b.Seq().Mark(to)); err != nil {
				return err
			}
		}
		b.AddHandler(from, to, handler, 0)
	}
	return nil
}
