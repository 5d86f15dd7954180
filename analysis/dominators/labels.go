package dominators

import (
	"math/bits"
	"slices"
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
	classes  [][][]uint32 // for a sample: per dimension and group, its members' classes
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
// With Rate N > 1 only every N-th member is labelled, and Retained is an estimate, N times the
// sum of the labelled members' own parts (the Horvitz–Thompson estimator of a sum from a sample
// that takes each member with probability 1/N). The unlabelled members are not known, so a
// member's own part ends, besides at the labelled members below it, at every unlabelled object
// of a class that the group's labelled members have: such an object may be a member the sample
// left out, whose own part the N-fold count of the labelled ones stands for. That keeps each own
// part a figure of the member and the heap alone, whichever members the sample took: a linked
// list of one site is estimated from its labelled nodes' own parts, each a node, not from the
// tails they hold. What an unlabelled object of such a class holds that is not a member's (a
// string another account made, held by one of the group's) is in no own part, so the estimate
// then falls short of the union by that much. Variance is the estimator's variance as estimated
// from the sample: N(N-1) times the sum of the squared own parts. AtLeast is the union of the
// labelled members' retained sets alone, which the whole group's union contains: a bound below
// that holds however the sample fell. With Rate 1, Retained and AtLeast are the same exact
// figure and Variance is 0.
type GroupRetained struct {
	Group    uint32
	Members  uint64 // labelled members met
	Shallow  uint64 // their shallow bytes
	Retained uint64
	AtLeast  uint64
	Variance float64
}

// prepare marks the labelled nodes of a graph of n nodes for find and, for a sample, collects the
// classes of each group's labelled members (classOf gives each node's).
func (l *Labels) prepare(n int, classOf []uint32) {
	l.prepared.Do(func() {
		l.mark(n)
		if l.Rate > 1 && classOf != nil {
			l.groupClasses(classOf)
		}
	})
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

// groupClasses sets l.classes[d][g] to the classes of the labelled members of group g of
// dimension d, sorted: a label (an account and a site) has objects of one class or a few.
func (l *Labels) groupClasses(classOf []uint32) {
	labelClasses := make([][]uint32, 0)
	for i, v := range l.Nodes {
		c := classOf[v]
		for _, k := range l.Keys[l.Off[i]:l.Off[i+1]] {
			for int(k) >= len(labelClasses) {
				labelClasses = append(labelClasses, nil)
			}
			if !slices.Contains(labelClasses[k], c) {
				labelClasses[k] = append(labelClasses[k], c)
			}
		}
	}
	l.classes = make([][][]uint32, len(l.Groups))
	for d := range l.Groups {
		l.classes[d] = make([][]uint32, l.Count[d])
		for k, cs := range labelClasses {
			g := l.Groups[d][k]
			for _, c := range cs {
				if !slices.Contains(l.classes[d][g], c) {
					l.classes[d][g] = append(l.classes[d][g], c)
				}
			}
		}
		for _, cs := range l.classes[d] {
			slices.Sort(cs)
		}
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
// (Retained); classOf, each node's class, is read only for a sample (Rate > 1), whose own parts
// end at unlabelled objects of the groups' classes (without it, nil, only at labelled members). The result is indexed by dimension, then by
// group. Walks of one tree and labels may run at once.
//
// The subtree is walked depth first, keeping for each group the member nearest above the current
// node (an index into a stack of the open members' frames, each linked to the one above it of its
// group), so each member learns, as the walk leaves it, what the members nearest below it claim.
func (t *Tree) ByLabel(g *heapgraph.Graph, retained []uint64, l *Labels, root uint32, classOf []uint32) [][]GroupRetained {
	off, kids := t.Children()
	l.prepare(len(retained), classOf)
	w := labelWalk{g: g, retained: retained, l: l, rate: max(l.Rate, 1)}
	if w.rate > 1 && l.classes != nil {
		w.classOf = classOf
	}
	w.out = make([][]GroupRetained, len(l.Count))
	w.open = make([][]int32, len(l.Count))
	w.opened = make([][]uint32, len(l.Count))
	w.at = make([][]int32, len(l.Count))
	for d, n := range l.Count {
		w.out[d] = make([]GroupRetained, n)
		w.open[d] = make([]int32, n)
		w.at[d] = make([]int32, n)
		for k := range n {
			w.out[d][k].Group = uint32(k)
			w.open[d][k] = -1
			w.at[d][k] = -1
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
		if w.enter(v) {
			stack.Push(exit | uint64(v))
		}
		for _, k := range kids[off[v]:off[v+1]] {
			if off[k] < off[k+1] {
				stack.Push(uint64(k))
			} else if w.enter(k) {
				// A leaf, most of a dominator tree: entered and left at once.
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
	classOf  []uint32 // for a sample: own parts end at unlabelled objects of a group's classes
	out      [][]GroupRetained
	// open[d][k] is the frame of group k of dimension d nearest above (-1: none); opened[d]
	// lists the groups of dimension d that have one, and at[d][k] is k's place in it (-1: none).
	open   [][]int32
	opened [][]uint32
	at     [][]int32
	frames []labelFrame
}

// labelFrame is an open frame of one group: a member's, or, with a sample, an unlabelled object's
// of one of the group's classes below a member (cut), which may be a member the sample left out.
// It holds the frame of the group's member above it and what the frames below it that are done
// claim of its retained set.
type labelFrame struct {
	node    uint32
	group   uint32
	dim     uint8
	cut     bool
	up      int32
	claimed uint64
}

// enter opens v's frames: one for each group it is labelled in, or, for an unlabelled v in a
// sample, one for each group with a member above it that has objects of v's class. It reports
// whether it opened any.
func (w *labelWalk) enter(v uint32) bool {
	l := w.l
	first := len(w.frames)
	if i, ok := l.find(v); ok {
		for _, key := range l.Keys[l.Off[i]:l.Off[i+1]] {
			for d := range l.Groups {
				w.push(v, uint8(d), l.Groups[d][key], first, false)
			}
		}
		return true
	}
	if w.classOf == nil {
		return false
	}
	c := w.classOf[v]
	for d, groups := range w.opened {
		for _, g := range groups {
			if _, ok := slices.BinarySearch(l.classes[d][g], c); ok {
				w.push(v, uint8(d), g, first, true)
			}
		}
	}
	return len(w.frames) > first
}

// push opens a frame of group g of dimension d for v, unless v has one since first.
func (w *labelWalk) push(v uint32, d uint8, g uint32, first int, cut bool) {
	for _, f := range w.frames[first:] {
		if f.dim == d && f.group == g {
			return
		}
	}
	up := w.open[d][g]
	w.frames = append(w.frames, labelFrame{node: v, group: g, dim: d, cut: cut, up: up})
	w.open[d][g] = int32(len(w.frames) - 1)
	if up < 0 {
		w.at[d][g] = int32(len(w.opened[d]))
		w.opened[d] = append(w.opened[d], g)
	}
}

// leave closes the frames enter opened for v, the last on the stack, and counts v in the groups
// it is a member of.
func (w *labelWalk) leave(v uint32) {
	r, s := w.retained[v], w.g.SizeOf(v)
	for len(w.frames) > 0 && w.frames[len(w.frames)-1].node == v {
		f := w.frames[len(w.frames)-1]
		w.frames = w.frames[:len(w.frames)-1]
		w.open[f.dim][f.group] = f.up
		if f.up >= 0 {
			w.frames[f.up].claimed += r
		} else {
			w.close(f.dim, f.group)
		}
		if f.cut {
			continue
		}
		own := s
		if r > f.claimed && r-f.claimed > own {
			own = r - f.claimed
		}
		o := &w.out[f.dim][f.group]
		o.Members++
		o.Shallow += s
		o.Retained += w.rate * own
		o.Variance += float64(w.rate) * float64(w.rate-1) * float64(own) * float64(own)
		if f.up < 0 {
			o.AtLeast += r
		}
	}
}

// close takes group g of dimension d, which has no frame open any more, off the open list.
func (w *labelWalk) close(d uint8, g uint32) {
	list := w.opened[d]
	i := w.at[d][g]
	last := list[len(list)-1]
	list[i] = last
	w.at[d][last] = i
	w.opened[d] = list[:len(list)-1]
	w.at[d][g] = -1
}
