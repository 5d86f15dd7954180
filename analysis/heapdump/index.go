package heapdump

import "math/bits"

// idIndex finds a node by object id in the ascending ObjectID slice without a hash table: ids
// are addresses, so a coarse table over the id range (one slot per few objects) narrows each
// search to a handful of neighbouring entries. It costs ~1 byte per node, against 16+ for a map.
type idIndex struct {
	min    uint64
	shift  uint
	bucket []uint32 // bucket[b] = first node whose (id-min)>>shift >= b
}

const nodesPerBucket = 4

// build indexes ids[1:] (ids[0] is the super root), which must be ascending.
func (x *idIndex) build(ids []uint64) {
	*x = idIndex{}
	n := len(ids) - 1
	if n <= 0 {
		return
	}
	x.min = ids[1]
	span := ids[n] - x.min
	want := uint64(n/nodesPerBucket + 1)
	for x.shift = 0; span>>x.shift >= want; x.shift++ {
	}
	nb := int(span>>x.shift) + 2
	x.bucket = make([]uint32, nb)
	b := 0
	for i := 1; i <= n; i++ {
		k := int((ids[i] - x.min) >> x.shift)
		for b <= k {
			x.bucket[b] = uint32(i)
			b++
		}
	}
	for ; b < nb; b++ {
		x.bucket[b] = uint32(n + 1)
	}
}

func (x *idIndex) find(ids []uint64, id uint64) (uint32, bool) {
	if len(x.bucket) == 0 || id < x.min {
		return 0, false
	}
	k := (id - x.min) >> x.shift
	if k >= uint64(len(x.bucket)-1) {
		return 0, false
	}
	lo, hi := x.bucket[k], x.bucket[k+1]
	for lo < hi {
		m := (lo + hi) >> 1
		if ids[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if int(lo) < len(ids) && ids[lo] == id && lo != 0 {
		return lo, true
	}
	return 0, false
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
