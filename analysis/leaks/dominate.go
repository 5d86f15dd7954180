package leaks

import (
	"runtime"

	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/dynsize"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// Dominators is the first step: the dominator tree, in two steps of its own, the depth-first
// search and the rest of the tree.
//
//  1. The edges the dynamic sizes skip are marked on the other core while the shallow sizes and
//     the classes go out (startSkip), so that the components' search can start at once.
//  2. The depth-first search runs on one core; the components' search on the other, when the
//     memory allows (startBeside).
//  3. The predecessor lists, split between the cores when the memory allows (listPredecessors).
//  4. The edges go out on the other core while the rest of the tree, which reads none of the
//     input, is worked out on one.
func (a *Analysis) Dominators() error {
	early := a.startSkip()
	if err := a.cols.Out(colSizes, colClassOf); err != nil {
		return err
	}
	if err := a.freeing("dominators", "depth-first search"); err != nil {
		return err
	}
	a.beside = a.startBeside(early)
	searched := dominators.DepthFirst(a.g, a.in.Weak, a.sc)
	if err := a.freeing("dominators", "dominator tree"); err != nil {
		return err
	}
	a.listPredecessors(searched)
	a.beside.wait() // before the edges go out
	// The rest of the tree, the retained sizes and the tree's child lists need no edges until
	// the paths are searched; the tree's new array takes one the lists gave back.
	parkedEdges := make(chan error, 1)
	go func() { parkedEdges <- a.cols.Out(edgeColumns...) }()
	tree, err := searched.Finish()
	if perr := <-parkedEdges; err == nil {
		err = perr
	}
	a.tree = tree
	return err
}

// startSkip marks the edges the dynamic sizes skip on another core, where there is one.
func (a *Analysis) startSkip() <-chan heapgraph.EdgeSet {
	if runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	ch := make(chan heapgraph.EdgeSet, 1)
	go func() { ch <- dynamicSkip(a.opt.Memory, a.g, a.in.Weak, a.in.ClassObjects) }()
	return ch
}

// besideSearch is the components' search for the dynamic sizes running beside the dominators'
// depth-first search, which reads only the edges as it does.
type besideSearch struct {
	done  chan struct{} // closed once the search is over; nil when it did not start
	room  *dynsize.StackRoom
	skip  heapgraph.EdgeSet // the edges skipped, when the search found the components
	found *dynsize.Found    // nil when it gave up or did not start
}

// wait waits for the search, if it started.
func (b *besideSearch) wait() {
	if b.done != nil {
		<-b.done
	}
}

// startBeside starts the components' search beside the depth-first search, if the memory
// allows: the components then wait, a word per node, for their phase. Both searches' arrays
// come on top of what is resident now: four words per node and a bit per edge for the
// depth-first search (three arrays, and its stack of open nodes, a word per node at worst); a
// word per node and a bit per edge for the other, and its stacks, whose size the graph's shape
// decides (a frame per node on the deepest path). Arrays made ahead (Options.Ahead) are
// resident already, as far as their pages are in, and go to the searches that take them, each
// search's first arrays. Under a memory limit the search gets what the limit leaves for its
// stacks and gives up if it needs more; it then runs in its own phase.
func (a *Analysis) startBeside(early <-chan heapgraph.EdgeSet) *besideSearch {
	var searchSc *memory.Scratch
	faulted := int64(0) // bytes of the arrays made ahead resident already, counted in resident()
	if ah := a.opt.Ahead; ah != nil {
		arrays := ah.take(a.n)
		if len(arrays) > 0 {
			faulted = ah.faulted.Load()
		}
		a.sc.Give(arrays[:min(len(arrays), dfsArrays)]...)
		if len(arrays) > dfsArrays {
			searchSc = &memory.Scratch{Budget: a.opt.Memory}
			searchSc.Give(arrays[dfsArrays:]...)
		}
	}
	b := &besideSearch{}
	stackRoom := int64(0)
	if a.limited {
		if r := resident(); r >= 0 {
			stackRoom = a.opt.MemoryLimit - r - (20*int64(a.n) + int64(a.m)/4) + faulted
		}
		b.room = dynsize.NewStackRoom(stackRoom)
	}
	if runtime.GOMAXPROCS(0) < 2 || a.limited && stackRoom < minStackRoom {
		// Not searched beside: the edges skipped are worked out again in the components'
		// phase, rather than held through the peak (the marking, which reads the edges, ends
		// first: they may go out), and the search's array waits for that phase.
		if early != nil {
			<-early
		}
		searchSc.MoveTo(a.sc)
		return b
	}
	b.done = make(chan struct{})
	go func() {
		defer close(b.done)
		skip := <-early
		b.found = dynsize.SearchWithin(a.g, skip, searchSc, b.room)
		// Where memory is short (no components found) the set of edges skipped is not kept
		// through the peak either; the components' phase works it out again.
		if b.found != nil {
			b.skip = skip
		}
		if besideDone != nil {
			besideDone(b.found != nil)
		}
	}()
	return b
}

// listPredecessors makes the tree's predecessor lists. Split between two cores, they take a
// word per node more, on top of the lists themselves (about half a word per edge; unsplit,
// about what the preorder array they replace gave back). The components' search, if it is still
// running, is held from here to what its stacks hold and searchSlack more, which is counted;
// past that it gives up, to run in its own phase. (Counting all the room it was left kept the
// lists from being split where the search ends a little after the depth-first search with a
// megabyte or two of stacks.) The preorder stays in memory, rather than going out to a file and
// back, where a word per node more leaves the split lists under the limit; with no limit known
// it goes out.
func (a *Analysis) listPredecessors(searched *dominators.Searched) {
	now := resident()
	if b := a.beside; b.done != nil && now >= 0 && b.room != nil {
		select {
		case <-b.done:
		default:
			now += b.room.Hold(searchSlack)
		}
	}
	n, limit := int64(a.n), a.opt.MemoryLimit
	more := 4*n + 2*int64(a.m)
	split := !a.limited || beside(now, more, limit)
	keep := a.limited && beside(now, more+4*n, limit)
	searched.ListPredecessorsKeeping(a.g, a.in.Weak, split, keep)
}

// besideDone, set in tests, learns whether the components' search beside the depth-first search
// found them or gave up.
var besideDone func(found bool)

// searchSlack is how much more than its stacks hold a components' search still running when the
// predecessor lists are made may take.
const searchSlack = 16 << 20

// minStackRoom is the least room for its stacks that the components' search beside the
// depth-first search is started with: a search that is given less gives up on most graphs.
const minStackRoom = 1 << 20

// beside reports whether work needing more bytes may run beside the rest, with resident bytes
// now resident (-1: unknown), under limit.
func beside(resident, more, limit int64) bool {
	return resident >= 0 && resident+more <= limit
}

// resident is memory.Resident, which tests replace to choose the room that a memory limit
// leaves.
var resident = memory.Resident
