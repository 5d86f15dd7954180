package heapdump

import (
	"math/bits"

	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// objectIDs holds the nodes' object ids, ascending, and finds a node by id without a hash table.
//
// Ids are addresses, so most of their bits say little: an id is kept as its offset from the
// smallest id, whose low 32 bits take four bytes per node; the high bits, which change a few
// times in a heap of many gigabytes, are kept as the nodes where they change. A coarse table
// over the id range (one slot per few objects) narrows each search to a handful of
// neighbouring nodes; a slot spans at most 2^32 ids, so the nodes in one share their high bits
// and are told apart by their low ones. Ids spread so thinly that a slot would span more
// (fewer than one object per gigabyte of ids: hand-made dumps) are kept whole instead.
// Memory: about 5 bytes per node, against 9 for whole ids and 16+ for a map.
type objectIDs struct {
	n      int      // nodes, the super root included
	full   []uint64 // every id, when they are too sparse for the compact form; else nil
	base   uint64   // the smallest id
	low    []uint32 // low 32 bits of id - base, per node (0 for the super root)
	hiNode []uint32 // from node hiNode[i] on, (id - base) >> 32 is hiVal[i] (0 before hiNode[0])
	hiVal  []uint32
	shift  uint
	bucket []uint32 // bucket[b] = first node whose (id-base)>>shift >= b
}

const nodesPerBucket = 4

// newObjectIDs takes the nodes' ids (ids[0] is the super root's and is not stored; the rest must
// be ascending).
func newObjectIDs(ids []uint64) objectIDs {
	n := len(ids)
	x := objectIDs{n: n}
	if n <= 1 {
		return x
	}
	x.base = ids[1]
	if x.shiftFor(ids[n-1]-x.base) > 32 {
		x.full = heapgraph.Make[uint64](n)
		copy(x.full[1:], ids[1:])
	} else {
		x.low = heapgraph.Make[uint32](n)
		hi := uint32(0)
		for i := 1; i < n; i++ {
			key := ids[i] - x.base
			x.low[i] = uint32(key)
			if h := uint32(key >> 32); h != hi {
				x.hiNode, x.hiVal = append(x.hiNode, uint32(i)), append(x.hiVal, h)
				hi = h
			}
		}
	}
	x.index()
	return x
}

// shiftFor is the table's slot width for ids spanning span: one slot per nodesPerBucket nodes.
func (x *objectIDs) shiftFor(span uint64) uint {
	want := uint64((x.n-1)/nodesPerBucket + 1)
	shift := uint(0)
	for span>>shift >= want {
		shift++
	}
	return shift
}

// index builds the lookup table over the ids held.
func (x *objectIDs) index() {
	x.bucket = nil
	if x.n <= 1 {
		return
	}
	span := x.at(uint32(x.n-1)) - x.base
	x.shift = x.shiftFor(span)
	nb := int(span>>x.shift) + 2
	x.bucket = heapgraph.Make[uint32](nb)
	// Each node's key is (id - base) >> shift, ascending: the slots up to it start at it. The
	// high bits are followed along, not looked up per node as at does.
	b, shift := 0, x.shift
	fill := func(i int, key uint64) {
		for k := int(key >> shift); b <= k; b++ {
			x.bucket[b] = uint32(i)
		}
	}
	if x.full != nil {
		for i := 1; i < x.n; i++ {
			fill(i, x.full[i]-x.base)
		}
	} else {
		hi, h := uint64(0), 0
		for i := 1; i < x.n; i++ {
			for h < len(x.hiNode) && x.hiNode[h] <= uint32(i) {
				hi = uint64(x.hiVal[h]) << 32
				h++
			}
			fill(i, hi|uint64(x.low[i]))
		}
	}
	for ; b < nb; b++ {
		x.bucket[b] = uint32(x.n)
	}
}

// at returns the id of node i (0 for the super root).
func (x *objectIDs) at(i uint32) uint64 {
	if i == 0 {
		return 0
	}
	if x.full != nil {
		return x.full[i]
	}
	hi := uint64(0)
	// The high bits change a few times at most in a real heap: a short scan beats a search.
	for k := 0; k < len(x.hiNode) && x.hiNode[k] <= i; k++ {
		hi = uint64(x.hiVal[k])
	}
	return x.base + (hi<<32 | uint64(x.low[i]))
}

// find returns the first node with id id.
func (x *objectIDs) find(id uint64) (uint32, bool) {
	if len(x.bucket) == 0 || id < x.base {
		return 0, false
	}
	key := id - x.base
	k := key >> x.shift
	if k >= uint64(len(x.bucket)-1) {
		return 0, false
	}
	lo, hi := x.bucket[k], x.bucket[k+1]
	if x.full != nil {
		for lo < hi {
			m := (lo + hi) >> 1
			if x.full[m] < id {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo < x.bucket[k+1] && x.full[lo] == id {
			return lo, true
		}
		return 0, false
	}
	end := hi
	want := uint32(key) // every node of the slot has key's high bits
	for lo < hi {
		m := (lo + hi) >> 1
		if x.low[m] < want {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < end && x.low[lo] == want {
		return lo, true
	}
	return 0, false
}

// keep renumbers the ids to the nodes in kept (ascending), whose new numbers are their ranks,
// and rebuilds the table. The kept ids are moved down in place, so that no copy of them is made
// (node v's id is read before any node at or above v is written); the first kept node's id
// becomes the base, and the high bits are recounted from it.
func (x *objectIDs) keep(kept bitset) {
	w := uint32(1)
	if x.n <= 1 {
		return
	}
	if x.full != nil {
		for v := uint32(1); v < uint32(x.n); v++ {
			if kept.has(v) {
				x.full[w] = x.full[v]
				w++
			}
		}
		*x = newObjectIDs(x.full[:w])
		return
	}
	if kept.has(1) {
		x.keepFirst(kept)
		return
	}
	base := uint64(0)
	var hiNode, hiVal []uint32
	hi := uint32(0)
	oldHi, hk := uint64(0), 0 // the old high bits, followed along as in index
	for v := uint32(1); v < uint32(x.n); v++ {
		for hk < len(x.hiNode) && x.hiNode[hk] <= v {
			oldHi = uint64(x.hiVal[hk]) << 32
			hk++
		}
		if !kept.has(v) {
			continue
		}
		id := x.base + (oldHi | uint64(x.low[v]))
		if w == 1 {
			base = id
		}
		key := id - base
		x.low[w] = uint32(key)
		if h := uint32(key >> 32); h != hi {
			hiNode, hiVal = append(hiNode, w), append(hiVal, h)
			hi = h
		}
		w++
	}
	if w == 1 {
		*x = objectIDs{n: 1}
		return
	}
	x.n, x.base, x.low, x.hiNode, x.hiVal = int(w), base, x.low[:w], hiNode, hiVal
	if x.shiftFor(x.at(w-1)-base) > 32 {
		// Fewer nodes over the same ids: too sparse now for a slot to share high bits.
		full := heapgraph.Make[uint64](int(w))
		for i := uint32(1); i < w; i++ {
			full[i] = x.at(i)
		}
		*x = objectIDs{n: int(w), base: base, full: full}
		x.index()
		return
	}
	x.index()
}

// keepFirst is keep when the first node stays, as it nearly always does (a dump drops a few
// unreachable objects of millions): the base stays, and with it every kept node's low bits and
// the table's slot width. The low bits move down, a word of kept nodes at a time, and the
// table's entries and the nodes where the high bits change are renumbered by rank, without
// reading the ids again or rebuilding the table (28-44 ms of a 411 MB dump's 90 ms of dropping).
func (x *objectIDs) keepFirst(kept bitset) {
	n := uint32(x.n)
	// before[k] counts the kept nodes from node 1 up to word k.
	before := make([]uint32, len(kept)+1)
	for k, word := range kept {
		if k == 0 {
			word &^= 1 // the super root is node 0 in any case
		}
		before[k+1] = before[k] + uint32(bits.OnesCount64(word))
	}
	// renumber gives the new number of the first kept node at or after node v (from 1 on).
	renumber := func(v uint32) uint32 {
		if v >= n {
			v = n
		}
		k := v >> 6
		if int(k) >= len(kept) {
			return 1 + before[len(kept)]
		}
		word := kept[k] & (1<<(v&63) - 1)
		if k == 0 {
			word &^= 1
		}
		return 1 + before[k] + uint32(bits.OnesCount64(word))
	}
	w := uint32(1)
	for v := uint32(1); v < n; {
		if v&63 == 0 && v+64 <= n && kept[v>>6] == ^uint64(0) {
			w += uint32(copy(x.low[w:], x.low[v:v+64]))
			v += 64
			continue
		}
		if kept.has(v) {
			x.low[w] = x.low[v]
			w++
		}
		v++
	}
	for i, v := range x.hiNode {
		x.hiNode[i] = renumber(v)
	}
	for b, v := range x.bucket {
		x.bucket[b] = renumber(v)
	}
	x.n, x.low = int(w), x.low[:w]
}

// bitset is a fixed-size set of small integers.
type bitset []uint64

func newBitset(n int) bitset       { return make(bitset, (n+63)/64) }
func (b bitset) set(i uint32)      { b[i>>6] |= 1 << (i & 63) }
func (b bitset) has(i uint32) bool { return b[i>>6]&(1<<(i&63)) != 0 }
func (b bitset) count() (n int) {
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}
