package tracked

import (
	"math/bits"

	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// The dimensions of the labels Labels makes: the account an object was charged to, the site
// that allocated it, and the two together.
const (
	DimAccount = iota
	DimSite
	DimPair
)

// Groups numbers the accounts, sites and (account, site) pairs of the tracked objects: group k of
// DimAccount is account Accounts[k], and so on. A label of the Labels is a pair: label k is
// group k of DimPair.
type Groups struct {
	Accounts []int
	Sites    []int
	Pairs    [][2]int // account, site
}

// Labels labels each tracked object of a graph of n nodes with the (account, site) pairs of its
// tracking references, at the runtime's sampling rate: an object is in its account's, its site's
// and its pair's group. An object tracked twice (the two parts of a multianewarray's outermost
// array, or an object both a site and the Object.<init> hook counted) has each pair once, and is
// in a group its two pairs share once. Objects set apart (SetApart) and cleared references are
// left out.
//
// The objects are put in node order by counting, a bit per node marking them: a dump of a run
// with liveness tracks millions, whose sort took a third of a second.
func (r *Runtime) Labels(n int) (*dominators.Labels, *Groups) {
	refs := &r.Refs
	valid := func(i int) bool { o := refs.Objects[i]; return o != 0 && !r.Own.Has(o) }
	has := heapgraph.NewEdgeSet(n)
	for i, o := range refs.Objects {
		if valid(i) {
			has.Add(o)
		}
	}
	rank := make([]uint32, len(has)+1)
	for w, word := range has {
		rank[w+1] = rank[w] + uint32(bits.OnesCount64(word))
	}
	index := func(o uint32) uint32 { return rank[o>>6] + uint32(bits.OnesCount64(has[o>>6]&(1<<(o&63)-1))) }
	objects := int(rank[len(has)])
	// off[k] counts object k's references, then runs up to the end of its list; placing the
	// labels from the last reference back, each in front of the ones placed before, leaves
	// off[k] at the start of its list.
	off := make([]uint32, objects+1)
	for i, o := range refs.Objects {
		if valid(i) {
			off[index(o)]++
		}
	}
	for k := 1; k <= objects; k++ {
		off[k] += off[k-1]
	}
	gr, label := newGrouping()
	keys := make([]uint32, off[objects])
	for i := len(refs.Objects) - 1; i >= 0; i-- {
		if valid(i) {
			k := index(refs.Objects[i])
			off[k]--
			keys[off[k]] = label(refs.Keys[i])
		}
	}
	l := &dominators.Labels{Rate: max(r.Rate, 1), Nodes: make([]uint32, 0, objects), Off: off}
	for w, word := range has {
		for ; word != 0; word &= word - 1 {
			l.Nodes = append(l.Nodes, uint32(w<<6|bits.TrailingZeros64(word)))
		}
	}
	l.Keys = dedupeRuns(keys, off)
	l.Groups = [][]uint32{gr.accountOf, gr.siteOf, gr.pairOf}
	l.Count = []int{len(gr.Accounts), len(gr.Sites), len(gr.Pairs)}
	return l, &gr.Groups
}

// dedupeRuns drops repeated labels within each object's run keys[off[k]:off[k+1]], in place,
// moving off with them (an object has a label or two).
func dedupeRuns(keys, off []uint32) []uint32 {
	w := uint32(0)
	for k := 0; k+1 < len(off); k++ {
		from, to := off[k], off[k+1]
		off[k] = w
		for i := from; i < to; i++ {
			dup := false
			for _, x := range keys[off[k]:w] {
				dup = dup || x == keys[i]
			}
			if !dup {
				keys[w] = keys[i]
				w++
			}
		}
	}
	off[len(off)-1] = w
	return keys[:w]
}

// grouping numbers accounts, sites and pairs as the keys come.
type grouping struct {
	Groups
	accountOf, siteOf, pairOf []uint32 // by label (pair): its account's, site's and own group
}

// newGrouping returns a grouping and the function that gives a key's label, numbering its pair,
// account and site on first sight. Keys come in runs of one site: the last key is kept aside.
func newGrouping() (*grouping, func(key uint64) uint32) {
	gr := &grouping{}
	accounts, sites, pairs := map[int]uint32{}, map[int]uint32{}, map[uint64]uint32{}
	number := func(m map[int]uint32, ids *[]int, id int) uint32 {
		k, ok := m[id]
		if !ok {
			k = uint32(len(*ids))
			m[id] = k
			*ids = append(*ids, id)
		}
		return k
	}
	lastKey, lastLabel := ^uint64(0), uint32(0)
	return gr, func(key uint64) uint32 {
		key &^= 1 // the part: both parts are one object
		if key == lastKey {
			return lastLabel
		}
		p, ok := pairs[key]
		if !ok {
			a, s := Account(key), Site(key)
			p = uint32(len(gr.Pairs))
			pairs[key] = p
			gr.Pairs = append(gr.Pairs, [2]int{a, s})
			gr.accountOf = append(gr.accountOf, number(accounts, &gr.Accounts, a))
			gr.siteOf = append(gr.siteOf, number(sites, &gr.Sites, s))
			gr.pairOf = append(gr.pairOf, p)
		}
		lastKey, lastLabel = key, p
		return p
	}
}
