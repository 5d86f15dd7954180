package tracked

import (
	"cmp"
	"slices"

	"github.com/heapledger/heapledger/analysis/dominators"
)

// The dimensions of the labels Groups makes: the account an object was charged to, the site
// that allocated it, and the two together.
const (
	DimAccount = iota
	DimSite
	DimPair
)

// Groups numbers the accounts, sites and (account, site) pairs of the tracked objects, for
// dominators.Labels: group k of DimAccount is account Accounts[k], and so on.
type Groups struct {
	Accounts []int
	Sites    []int
	Pairs    [][2]int // account, site
}

// Labels labels each tracked object with its account, its site and the pair of them, at the
// runtime's sampling rate. An object tracked twice (the two parts of a multianewarray's outermost
// array, or an object both a site and the Object.<init> hook counted) is in each group once.
// Objects the runtime set apart (SetApart) are left out; so are cleared references.
func (r *Runtime) Labels() (*dominators.Labels, *Groups) {
	refs := make([]Ref, 0, len(r.Refs))
	for _, ref := range r.Refs {
		if ref.Object != 0 && !r.Own.Has(ref.Object) {
			refs = append(refs, ref)
		}
	}
	slices.SortFunc(refs, func(a, b Ref) int { return cmp.Compare(a.Object, b.Object) })
	gr := &Groups{}
	accounts, sites, pairs := map[int]uint32{}, map[int]uint32{}, map[[2]int]uint32{}
	group := func(m map[int]uint32, ids *[]int, id int) uint32 {
		k, ok := m[id]
		if !ok {
			k = uint32(len(*ids))
			m[id] = k
			*ids = append(*ids, id)
		}
		return k
	}
	l := &dominators.Labels{Rate: max(r.Rate, 1), Off: []uint32{0}}
	for i := 0; i < len(refs); {
		obj := refs[i].Object
		start := len(l.Members)
		for ; i < len(refs) && refs[i].Object == obj; i++ {
			a, s := Account(refs[i].Key), Site(refs[i].Key)
			p, ok := pairs[[2]int{a, s}]
			if !ok {
				p = uint32(len(gr.Pairs))
				pairs[[2]int{a, s}] = p
				gr.Pairs = append(gr.Pairs, [2]int{a, s})
			}
			for _, m := range []dominators.Member{
				{Dim: DimAccount, Group: group(accounts, &gr.Accounts, a)},
				{Dim: DimSite, Group: group(sites, &gr.Sites, s)},
				{Dim: DimPair, Group: p},
			} {
				if !slices.Contains(l.Members[start:], m) {
					l.Members = append(l.Members, m)
				}
			}
		}
		l.Nodes = append(l.Nodes, obj)
		l.Off = append(l.Off, uint32(len(l.Members)))
	}
	l.Groups = []int{len(gr.Accounts), len(gr.Sites), len(gr.Pairs)}
	return l, gr
}
