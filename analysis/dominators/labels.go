package dominators

import (
	"math/bits"
	"sync"

	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// Labels puts some nodes of a graph into groups, in one or more dimensions: heapledger labels
// each object its runtime tracked with the memory account and the allocation site that made it.
// A node carries labels, and a label stands for one group in each dimension; a node is in the
// groups its labels give, each once (an object that two sites counted has two labels, of one
// account: it is in that account's group once). Few distinct labels cover millions of nodes, so
// a node costs its labels, not a member per dimension.
//
// Labels may cover every member of each group, or a sample of them: Rate is then how many
// members each labelled one stands for (heapledger's liveness sample:N labels every N-th
// allocation of each site), and ByLabel estimates what the unlabelled members hold.
type Labels struct {
	// Nodes lists the labelled nodes, ascending and each once; node Nodes[i] has the labels
	// Keys[Off[i]:Off[i+1]].
	Nodes []uint32
	Off   []uint32
	Keys  []uint32
	// Groups[d][k] is the group in dimension d of label k, below Count[d].
	Groups [][]uint32
	Count  []int
	// Rate is how many members of a group each labelled member stands for: 1 when all are
	// labelled.
	Rate uint64

	// has marks the labelled nodes, a bit per node of the graph, and rank counts the bits set
	// before each word of it: a node's index in Nodes in two reads (see find). They are made
	// once, by the first of walks that may run at once.
	has      heapgraph.EdgeSet
	rank     []uint32
	prepared sync.Once
}

// GroupRetained sums one group's labelled members in a subtree of the dominator tree.
//
// Retained is the size of the union of the members' retained sets: everything the collector
// would free with some member, counted once. A member dominated by another member of its group is
// inside that one's retained set, so the union is the sum, over the members, of what each holds
// that no member below it holds (its own part): its retained size less the retained sizes of the
// members nearest below it. Objects that two members hold together, neither alone, are in
// neither retained set and not in the union, as in retained size by class.
//
// With Rate N > 1 only every N-th member is labelled, and Retained is an estimate: each labelled
// member stands for N like it, so its own part is counted N times, and the members nearest below
// it claim, besides their retained sets, the own parts of the N-1 unlabelled members each stands
// for, which would lie beside them in the same holder (a collection's elements) or between them (a
// linked list's nodes), and come off its own part. Its own part is never less than its shallow
// size. A collection of independent objects is then estimated as N times its sampled elements,
// and a linked list of one site as its length in nodes, not N times its whole tail. Variance
// estimates the variance of Retained as the Horvitz–Thompson estimator's is estimated for a
// sample that takes each member with probability 1/N: N(N-1) times the sum of the squared own
// parts. AtLeast is the union of the labelled members' retained sets alone, which the whole
// group's union contains: a bound below that holds however the sample fell. With Rate 1,
// Retained and AtLeast are the same exact figure and Variance is 0.
type GroupRetained struct {
	Group    uint32
	Members  uint64 // labelled members met
	Shallow  uint64 // their shallow bytes
	Retained uint64
	AtLeast  uint64
	Variance float64
}

// prepare marks the labelled nodes of a graph of n nodes for find.
func (l *Labels) prepare(n int) {
	l.prepared.Do(func() { l.mark(n) })
}

func (l *Labels) mark(n int) {
	l.has = heapgraph.NewEdgeSet(n)
	for _, v := range l.Nodes {
		l.has.Add(v)
	}
	l.rank = make([]uint32, len(l.has)+1)
	for w, word := range l.has {
		l.rank[w+1] = l.rank[w] + uint32(bits.OnesCount64(word))
	}
}

// find returns the index in Nodes of node v, if it is labelled.
func (l *Labels) find(v uint32) (int, bool) {
	w := v >> 6
	if int(w) >= len(l.has) || l.has[w]&(1<<(v&63)) == 0 {
		return 0, false
	}
	return int(l.rank[w]) + bits.OnesCount64(l.has[w]&(1<<(v&63)-1)), true
}

// ByLabel sums, per group of each dimension, the labelled members in the dominator subtree of
// root (0 for the whole tree): see GroupRetained. retained holds every node's retained size
// (Retained). The result is indexed by dimension, then by group. Walks of one tree and labels may
// run at once.
//
// The subtree is walked depth first, keeping for each group the member nearest above the current
// node (an index into a stack of the open members' frames, each linked to the one above it of its
// group), so each member learns, as the walk leaves it, what the members nearest below it claim.
func (t *Tree) ByLabel(g *heapgraph.Graph, retained []uint64, l *Labels, root uint32) [][]GroupRetained {
	off, kids := t.Children()
	l.prepare(len(retained))
	w := labelWalk{g: g, retained: retained, l: l, rate: max(l.Rate, 1)}
	w.out = make([][]GroupRetained, len(l.Count))
	w.open = make([][]int32, len(l.Count))
	for d, n := range l.Count {
		w.out[d] = make([]GroupRetained, n)
		w.open[d] = make([]int32, n)
		for k := range n {
			w.out[d][k].Group = uint32(k)
			w.open[d][k] = -1
		}
	}
	const exit = 1 << 32
	var stack heapgraph.Stack[uint64]
	stack.Push(uint64(root))
	for !stack.Empty() {
		top := stack.Pop()
		v := uint32(top)
		if top&exit != 0 {
			w.leave(v)
			continue
		}
		if i, ok := l.find(v); ok {
			w.enter(v, i)
			stack.Push(exit | uint64(v))
		}
		for _, k := range kids[off[v]:off[v+1]] {
			if off[k] < off[k+1] {
				stack.Push(uint64(k))
			} else if i, ok := l.find(k); ok {
				// A leaf, most of a dominator tree: entered and left at once.
				w.enter(k, i)
				w.leave(k)
			}
		}
	}
	return w.out
}

// labelWalk is ByLabel's state.
type labelWalk struct {
	g        *heapgraph.Graph
	retained []uint64
	l        *Labels
	rate     uint64
	out      [][]GroupRetained
	// open[d][k] is the frame of group k of dimension d's member nearest above (-1: none).
	open   [][]int32
	frames []labelFrame
}

// labelFrame is an open member's in one group: the member, the group, the frame of the group's
// member above it, and what the members below it that are done claim of its retained set.
type labelFrame struct {
	node    uint32
	group   uint32
	dim     uint8
	up      int32
	claimed uint64
}

// enter opens a frame for each group that labelled node v (Nodes[i]) is in.
func (w *labelWalk) enter(v uint32, i int) {
	l := w.l
	first := len(w.frames)
	for _, key := range l.Keys[l.Off[i]:l.Off[i+1]] {
		for d := range l.Groups {
			g := l.Groups[d][key]
			dup := false
			for _, f := range w.frames[first:] {
				dup = dup || f.dim == uint8(d) && f.group == g
			}
			if dup {
				continue
			}
			w.frames = append(w.frames, labelFrame{node: v, group: g, dim: uint8(d), up: w.open[d][g]})
			w.open[d][g] = int32(len(w.frames) - 1)
		}
	}
}

// leave closes the frames enter opened for v, the last on the stack, and counts v in its groups.
func (w *labelWalk) leave(v uint32) {
	r, s := w.retained[v], w.g.SizeOf(v)
	for len(w.frames) > 0 && w.frames[len(w.frames)-1].node == v {
		f := w.frames[len(w.frames)-1]
		w.frames = w.frames[:len(w.frames)-1]
		own := s
		if r > f.claimed && r-f.claimed > own {
			own = r - f.claimed
		}
		o := &w.out[f.dim][f.group]
		o.Members++
		o.Shallow += s
		o.Retained += w.rate * own
		o.Variance += float64(w.rate) * float64(w.rate-1) * float64(own) * float64(own)
		w.open[f.dim][f.group] = f.up
		if f.up >= 0 {
			w.frames[f.up].claimed += r + (w.rate-1)*own
		} else {
			o.AtLeast += r
		}
	}
}
