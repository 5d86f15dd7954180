package dominators

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// ClassRetained sums the objects of one class.
type ClassRetained struct {
	Class     uint32
	Instances uint64
	Shallow   uint64
	// Retained is the size of the union of the instances' retained sets. Instances dominated by
	// another instance of the same class are already inside that one's retained set, so only the
	// topmost instances on each dominator-tree path are summed (as Eclipse MAT groups its
	// dominator tree by class); a plain sum would count a linked list's tail once per element.
	Retained uint64
}

// ByClass groups shallow and retained sizes of g's nodes by class. classOf gives each node's class index
// below nClasses, or heapgraph.NoNode for nodes that belong to no class (the super root).
// Unreachable nodes are left out. The result is indexed by class.
//
// The dominator tree is walked depth first keeping, per class, how many instances lie on the
// path from the root to the current node; a node is topmost when its class count is zero. The
// walk meets every reachable node once, so it counts instances and shallow bytes too, and needs
// neither the preorder nor the immediate dominators (see ReleaseNodes). Subtrees are walked on
// every core: the nodes near the root that retain more than a share of the heap are counted
// first, one at a time, and their children's subtrees become the tasks, each starting from the
// classes on its path.
func (t *Tree) ByClass(g *heapgraph.Graph, retained []uint64, classOf []uint32, nClasses int) []ClassRetained {
	off, kids := t.Children()
	w := byClassWalk{g: g, retained: retained, classOf: classOf, off: off, kids: kids, limit: retained[0] / splitShare}
	out := newByClass(nClasses)
	tasks, paths := w.split(out)

	workers := min(runtime.GOMAXPROCS(0), len(tasks))
	outs := make([][]ClassRetained, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, onPath := newByClass(nClasses), make([]uint32, nClasses)
			var stack memory.Stack[uint64]
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) {
					break
				}
				task := tasks[i]
				for p := task.path; p >= 0; p = paths[p].up {
					onPath[paths[p].class]++
				}
				if task.from == task.to {
					w.walk(task.node, mine, onPath, &stack)
				} else {
					for _, k := range w.kids[task.from:task.to] {
						// A child over the share was split or is a task of its own.
						if w.retained[k] <= w.limit {
							w.walk(k, mine, onPath, &stack)
						}
					}
				}
				for p := task.path; p >= 0; p = paths[p].up {
					onPath[paths[p].class]--
				}
			}
			outs[k] = mine
		}()
	}
	wg.Wait()
	for _, o := range outs {
		for c := range out {
			out[c].Instances += o[c].Instances
			out[c].Shallow += o[c].Shallow
			out[c].Retained += o[c].Retained
		}
	}
	return out
}

func newByClass(nClasses int) []ClassRetained {
	out := make([]ClassRetained, nClasses)
	for c := range out {
		out[c].Class = uint32(c)
	}
	return out
}

// byClassWalk holds what the walks read.
type byClassWalk struct {
	g         *heapgraph.Graph
	retained  []uint64
	classOf   []uint32
	off, kids []uint32
	limit     uint64 // the share of the heap over which a subtree is split (see split)
}

// byClassTask is a subtree to walk, or the subtrees of some of a node's children: node's, when
// from == to, or else those of its children kids[from:to] that retain no more than the share
// that splits (the others are split or tasks of their own). path holds the classes above them,
// each once (an index into the paths, -1 for none).
type byClassTask struct {
	node     uint32
	from, to uint32
	path     int32
}

// pathStep is one class on the path above tasks, and the step above it (-1 for none).
type pathStep struct {
	class uint32
	up    int32
}

// Subtrees are split while they retain more than 1/splitShare of the heap, for at most
// maxSplit nodes: a long chain of such nodes (a linked list holding the heap) stays one task.
const (
	splitShare    = 64
	maxSplit      = 4096
	splitChildren = 256
)

// split counts into out the nodes near the root that retain more than a share of the heap and
// returns the subtrees below them as tasks, with the paths above those. The children of a split
// node go in tasks of up to splitChildren each, not one task per child: the super root has a
// child for every GC root, hundreds of thousands in a big heap.
func (w *byClassWalk) split(out []ClassRetained) ([]byClassTask, []pathStep) {
	var tasks []byClassTask
	var paths []pathStep
	split := 0
	type item struct {
		node uint32
		path int32
	}
	queue := []item{{0, -1}}
	for len(queue) > 0 {
		it := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		v := it.node
		if v != 0 && split >= maxSplit {
			tasks = append(tasks, byClassTask{node: v, path: it.path})
			continue
		}
		split++
		path := it.path
		if c := w.classOf[v]; c != heapgraph.NoNode {
			above := false
			for p := it.path; p >= 0 && !above; p = paths[p].up {
				above = paths[p].class == c
			}
			o := &out[c]
			o.Instances++
			o.Shallow += w.g.SizeOf(v)
			// A walk asks only whether a class is on the path, not how often: a class already
			// there is not added again, so a path down a chain of one class (a linked list
			// retaining the heap) stays one step long instead of growing with the chain, and
			// neither this split nor the tasks below it spend time quadratic in its length.
			if !above {
				o.Retained += w.retained[v]
				paths = append(paths, pathStep{c, it.path})
				path = int32(len(paths) - 1)
			}
		}
		from, to := w.off[v], w.off[v+1]
		for _, k := range w.kids[from:to] {
			if w.retained[k] > w.limit {
				queue = append(queue, item{k, path})
			}
		}
		for lo := int(from); lo < int(to); lo += splitChildren {
			tasks = append(tasks, byClassTask{node: v, from: uint32(lo), to: uint32(min(lo+splitChildren, int(to))), path: path})
		}
	}
	return tasks, paths
}

// walk counts the subtree of root into out, onPath holding the classes above it, on stack, which
// it leaves empty for the next walk. A dominator tree can be a chain as long as the longest
// linked list in the heap, and the stack then holds a few entries per link: in chunks (see
// memory.Stack) it leaves no garbage as it grows.
func (w *byClassWalk) walk(root uint32, out []ClassRetained, onPath []uint32, stack *memory.Stack[uint64]) {
	const exit = 1 << 32
	stack.Push(uint64(root))
	for !stack.Empty() {
		top := stack.Pop()
		v := uint32(top)
		c := w.classOf[v]
		if top&exit != 0 {
			onPath[c]--
			continue
		}
		if c != heapgraph.NoNode {
			o := &out[c]
			o.Instances++
			o.Shallow += w.g.SizeOf(v)
			if onPath[c] == 0 {
				o.Retained += w.retained[v]
			}
			onPath[c]++
			stack.Push(exit | uint64(v))
		}
		for _, k := range w.kids[w.off[v]:w.off[v+1]] {
			if w.off[k] < w.off[k+1] {
				stack.Push(uint64(k))
				continue
			}
			// Most of a dominator tree is leaves: one is counted here, with the classes on the
			// path down to it as they are, rather than pushed and popped with its exit mark.
			if c := w.classOf[k]; c != heapgraph.NoNode {
				o := &out[c]
				o.Instances++
				o.Shallow += w.g.SizeOf(k)
				if onPath[c] == 0 {
					o.Retained += w.retained[k]
				}
			}
		}
	}
}
