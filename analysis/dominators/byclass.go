package dominators

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/heapledger/heapledger/analysis/heapgraph"
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
	w := byClassWalk{g: g, retained: retained, classOf: classOf, off: off, kids: kids}
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
			var stack []uint64
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) {
					break
				}
				task := tasks[i]
				for p := task.path; p >= 0; p = paths[p].up {
					onPath[paths[p].class]++
				}
				stack = w.walk(task.node, mine, onPath, stack)
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
}

// byClassTask is a subtree to walk: its root, and the classes on the path above it, each once
// (an index into the paths, -1 for none).
type byClassTask struct {
	node uint32
	path int32
}

// pathStep is one class on the path above tasks, and the step above it (-1 for none).
type pathStep struct {
	class uint32
	up    int32
}

// Subtrees are split while they retain more than 1/splitShare of the heap, for at most
// maxSplit nodes: a long chain of such nodes (a linked list holding the heap) stays one task.
const (
	splitShare = 64
	maxSplit   = 4096
)

// split counts into out the nodes near the root that retain more than a share of the heap and
// returns the subtrees below them as tasks, with the paths above those.
func (w *byClassWalk) split(out []ClassRetained) ([]byClassTask, []pathStep) {
	var tasks []byClassTask
	var paths []pathStep
	limit := w.retained[0] / splitShare
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
		if v != 0 && (w.retained[v] <= limit || split >= maxSplit) {
			tasks = append(tasks, byClassTask{v, it.path})
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
		for _, k := range w.kids[w.off[v]:w.off[v+1]] {
			queue = append(queue, item{k, path})
		}
	}
	return tasks, paths
}

// walk counts the subtree of root into out, onPath holding the classes above it; it returns the
// stack for the next walk to reuse.
func (w *byClassWalk) walk(root uint32, out []ClassRetained, onPath []uint32, stack []uint64) []uint64 {
	const exit = 1 << 32
	stack = append(stack[:0], uint64(root))
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
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
			stack = append(stack, exit|uint64(v))
		}
		for _, k := range w.kids[w.off[v]:w.off[v+1]] {
			stack = append(stack, uint64(k))
		}
	}
	return stack
}
