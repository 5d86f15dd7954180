package dominators

import "github.com/heapledger/heapledger/analysis/heapgraph"

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
func (t *Tree) ByClass(g *heapgraph.Graph, retained []uint64, classOf []uint32, nClasses int) []ClassRetained {
	out := make([]ClassRetained, nClasses)
	for c := range out {
		out[c].Class = uint32(c)
	}
	// Walk the dominator tree depth-first keeping, per class, how many instances lie on the path
	// from the root to the current node; a node is topmost when its class count is zero. The
	// walk meets every reachable node once, so it counts instances and shallow bytes too, and
	// needs neither the preorder nor the immediate dominators (see ReleaseNodes).
	off, kids := t.Children()
	onPath := make([]uint32, nClasses)
	const exit = 1 << 32
	stack := []uint64{0}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		v := uint32(top)
		c := classOf[v]
		if top&exit != 0 {
			onPath[c]--
			continue
		}
		if c != heapgraph.NoNode {
			out[c].Instances++
			out[c].Shallow += g.SizeOf(v)
			if onPath[c] == 0 {
				out[c].Retained += retained[v]
			}
			onPath[c]++
			stack = append(stack, exit|uint64(v))
		}
		for _, k := range kids[off[v]:off[v+1]] {
			stack = append(stack, uint64(k))
		}
	}
	return out
}
