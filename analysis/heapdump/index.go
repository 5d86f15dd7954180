package heapdump

import (
	"math"
	"math/bits"
	"sort"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// objectIDs holds the nodes' object ids, ascending, and finds a node by id without a hash table.
//
// Ids are addresses, so most of their bits say little: an id is kept as its offset from the
// smallest id, whose low 32 bits take four bytes per node; the high bits, which change a few
// times in a heap of many gigabytes, are kept as the nodes where they change. Ids spread so
// thinly that the table below would span more than 2^32 ids per slot (fewer than one object per
// gigabyte of ids: hand-made dumps) are kept whole instead.
//
// Finding a node goes through one of two tables over the id range. Where the ids are unique and
// dense enough, a bitmap with running counts (see ranks) gives a node's number as the count of
// ids below it: one cache line read and a population count per lookup, far less time than the
// search through the other table takes (which mispredicts its branches) on the references of a
// real dump. Otherwise a coarse table (one slot per few objects) narrows each
// search to a handful of neighbouring nodes; a slot spans at most 2^32 ids, so the nodes in one
// share their high bits and are told apart by their low ones. Memory: about 5 bytes per node
// either way, against 9 for whole ids and 16+ for a map.
type objectIDs struct {
	mem    *memory.Budget // where the tables come from
	n      int            // nodes, the super root included
	full   []uint64       // every id, when they are too sparse for the compact form; else nil
	base   uint64         // the smallest id
	low    []uint32       // low 32 bits of id - base, per node (0 for the super root)
	hiNode []uint32       // from node hiNode[i] on, (id - base) >> 32 is hiVal[i] (0 before hiNode[0])
	hiVal  []uint32
	ranks  ranks // when set (dir != nil), find uses it and bucket is nil
	shift  uint
	bucket []uint32 // bucket[b] = first node whose (id-base)>>shift >= b
}

// ranks finds a node by id in a bitmap over the id range with a bit per possible id, set for
// the ids present, and with each word of the bitmap the count of ids below it: node numbers
// are ranks. Object ids are addresses aligned to the heap's object alignment, so the bitmap has
// a bit per 2^shift ids (shift: the trailing zero bits that every id's offset from the smallest
// shares). A heap's objects lie in regions with gaps between them of up to gigabytes: the
// bitmap is cut into pages of 2^pageShift bits, and only pages holding an id have words, which
// dir points to; the page size is the one that makes the whole smallest.
type ranks struct {
	shift, pageShift uint
	dir              []uint32 // per page, the index in words of its first pair; NoNode when empty
	// words holds pairs: the number of the first node in the word (the ranks start at 1, after
	// the super root), then the word of the bitmap. A pair shares its cache line.
	words []uint64
	// pages, once the low bits are dropped (objectIDs.dropLow), holds the page of each page's
	// worth of pairs in words, in their order.
	pages []uint32
}

// Ids that repeat, or whose bitmap would take more than this many bytes per node (plus a
// little), are found through the coarse table instead.
const ranksBytesPerNode = 4

const nodesPerBucket = 4

// newObjectIDs takes the nodes' ids (ids[0] is the super root's and is not stored; the rest must
// be ascending).
func newObjectIDs(mem *memory.Budget, ids []uint64) objectIDs {
	n := len(ids)
	x := objectIDs{mem: mem, n: n}
	if n <= 1 {
		return x
	}
	x.base = ids[1]
	span := ids[n-1] - x.base
	if x.shiftFor(span) > 32 {
		x.full = memory.Make[uint64](x.mem, n)
		copy(x.full[1:], ids[1:])
		x.index(nil)
		return x
	}
	// Where the ranks can find the nodes, they are built from the ids, and the ids' offsets
	// are never kept: a node's id is where its bit is (see dropLow). That spares 4 bytes per
	// object of fresh memory while the references are read, where loading peaks.
	s := &survey{}
	for _, id := range ids[1:] {
		s.add(id - x.base)
	}
	if x.indexRanks(span, s, ids) {
		x.ranks.listPages()
		return x
	}
	x.setLow(func(i int) uint64 { return ids[i] - x.base })
	x.index(nil)
	return x
}

// setLow makes the low bits of the keys key(1), key(2), ... (ascending; key is called once for
// each, in that order), and the nodes where their high bits change.
func (x *objectIDs) setLow(key func(i int) uint64) {
	x.low = memory.Make[uint32](x.mem, x.n)
	x.hiNode, x.hiVal = nil, nil
	hi := uint32(0)
	for i := 1; i < x.n; i++ {
		k := key(i)
		x.low[i] = uint32(k)
		if h := uint32(k >> 32); h != hi {
			x.hiNode, x.hiVal = append(x.hiNode, uint32(i)), append(x.hiVal, h)
			hi = h
		}
	}
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

// index builds the lookup table over the ids held: the ranks when s, the survey of the compact
// ids, says they fit, else the coarse table.
func (x *objectIDs) index(s *survey) {
	x.bucket, x.ranks = nil, ranks{}
	if x.n <= 1 {
		return
	}
	span := x.at(uint32(x.n-1)) - x.base
	if s != nil && x.indexRanks(span, s, nil) {
		return
	}
	x.shift = x.shiftFor(span)
	nb := int(span>>x.shift) + 2
	x.bucket = memory.Make[uint32](x.mem, nb)
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

// survey is what the ranks' layout depends on, gathered as the compact ids are made: their
// alignment, whether any repeats, and how many pages each page size would fill. Consecutive
// keys a < b lie in different pages of 2^p ids exactly when p < bits.Len64(a^b), so a histogram
// of that length counts the pages of every size at once.
type survey struct {
	or, prev uint64
	seen     bool
	dup      bool
	// run counts the pairs in a row of length last, not yet added to lens: consecutive ids
	// mostly differ in the same bits, and adding each to its count in memory would wait on
	// the addition before it.
	last, run int
	lens      [65]int
}

// add takes the next key (id less the base), in ascending order.
func (s *survey) add(key uint64) {
	s.or |= key
	if s.seen {
		s.dup = s.dup || key == s.prev
		if l := bits.Len64(s.prev ^ key); l == s.last {
			s.run++
		} else {
			s.lens[s.last] += s.run
			s.last, s.run = l, 1
		}
	}
	s.prev, s.seen = key, true
}

// done adds the last run; add must not follow.
func (s *survey) done() {
	s.lens[s.last] += s.run
	s.run = 0
}

// indexRanks builds the ranks over the compact ids (or over ids, when given), whose largest
// offset from the base is span, unless ids repeat or the bitmap would be too big; it reports
// whether it did.
func (x *objectIDs) indexRanks(span uint64, s *survey, ids []uint64) bool {
	s.done()
	if s.dup {
		return false
	}
	shift := uint(0)
	if s.or != 0 {
		shift = uint(bits.TrailingZeros64(s.or))
	}
	slots := span >> shift // the last id's bit
	best, bestPages, bestBytes := uint(0), uint64(0), uint64(math.MaxUint64)
	for ps := uint(6); ps <= 40 && ps+shift < 64; ps++ {
		pages := uint64(1) // the first id's page
		for l := int(shift + ps + 1); l <= 64; l++ {
			pages += uint64(s.lens[l])
		}
		if pages > math.MaxUint64>>(ps-6+5) {
			break // bigger pages only take more words, beyond counting
		}
		bytes := (slots>>ps+1)*4 + pages<<(ps-6)*16
		if bytes < bestBytes {
			best, bestPages, bestBytes = ps, pages, bytes
		}
		if slots>>ps == 0 {
			break // one page holds them all; bigger pages only add empty words
		}
	}
	if bestBytes > uint64(x.n)*ranksBytesPerNode+4096 {
		return false
	}
	r := ranks{shift: shift, pageShift: best}
	dir := memory.Make[uint32](x.mem, int(slots>>best+1))
	for i := range dir {
		dir[i] = heapgraph.NoNode
	}
	words := memory.Make[uint64](x.mem, int(bestPages<<(best-6)*2))
	// The ids ascend, so each page's come together: a page gets its words as its first id
	// comes, and every id sets its bit. The word being filled is kept apart until the ids move
	// past it: setting the bits in memory, each would wait for the one before it to be stored.
	pairs, perPage, inPage := uint32(0), uint32(1)<<(best-6), uint64(1)<<(best-6)-1
	hi, h := uint64(0), 0
	page, first := ^uint64(0), uint64(0) // the page of the last id, and its first pair
	at, word := uint64(1), uint64(0)     // where word goes in words, and its bits so far
	for i := 1; i < x.n; i++ {
		var key uint64
		if ids != nil {
			key = ids[i] - x.base
		} else {
			for h < len(x.hiNode) && x.hiNode[h] <= uint32(i) {
				hi = uint64(x.hiVal[h]) << 32
				h++
			}
			key = hi | uint64(x.low[i])
		}
		b := key >> shift
		if pg := b >> best; pg != page {
			page, first = pg, uint64(pairs)
			dir[pg] = pairs
			pairs += perPage
		}
		if w := 2*(first+b>>6&inPage) + 1; w != at {
			words[at] |= word
			at, word = w, 0
		}
		word |= 1 << (b & 63)
	}
	words[at] |= word
	r.dir, r.words = dir, words
	r.count()
	x.ranks = r
	return true
}

// pair returns the index in words of the pair holding bit b, whose page must have words.
func (r *ranks) pair(b uint64) uint32 {
	return 2 * (r.dir[b>>r.pageShift] + uint32(b>>6)&(1<<(r.pageShift-6)-1))
}

// count sets each pair's first node from the bits before it.
func (r *ranks) count() {
	rank := uint64(1)
	for i := 0; i < len(r.words); i += 2 {
		r.words[i] = rank
		rank += uint64(bits.OnesCount64(r.words[i+1]))
	}
}

// listPages notes which page each page's words belong to, for bit.
func (r *ranks) listPages() {
	perPage := uint32(1) << (r.pageShift - 6)
	r.pages = make([]uint32, uint32(len(r.words)/2)/perPage)
	for pg, first := range r.dir {
		if first != heapgraph.NoNode {
			r.pages[first/perPage] = uint32(pg)
		}
	}
}

// bit returns the bit of node i (from 1 on): i's id is base + bit<<shift.
func (r *ranks) bit(i uint32) uint64 {
	// The pair holding it is the last whose first node is at most i: the pairs after an empty
	// one start at the same node, and the one after i's starts past it.
	p := sort.Search(len(r.words)/2, func(p int) bool { return r.words[2*p] > uint64(i) }) - 1
	word := r.words[2*p+1]
	for k := i - uint32(r.words[2*p]); k > 0; k-- {
		word &= word - 1
	}
	perPage := 1 << (r.pageShift - 6)
	return uint64(r.pages[p/perPage])<<r.pageShift | uint64(p%perPage)<<6 | uint64(bits.TrailingZeros64(word))
}

// eachBit calls fn with every node from 1 on, in order, and its bit; fn may clear the bit of
// the node it is given (the pair's word is read before fn is called for its bits).
func (r *ranks) eachBit(fn func(node uint32, b uint64)) {
	if r.pages == nil {
		r.listPages()
	}
	perPage := 1 << (r.pageShift - 6)
	for p := 0; p < len(r.words)/2; p++ {
		node, word := uint32(r.words[2*p]), r.words[2*p+1]
		at := uint64(r.pages[p/perPage])<<r.pageShift | uint64(p%perPage)<<6
		for ; word != 0; word &= word - 1 {
			fn(node, at|uint64(bits.TrailingZeros64(word)))
			node++
		}
	}
}

// bitCursor goes through the nodes' bits in order (ranks.bits).
type bitCursor struct {
	r       *ranks
	p       int    // the pair being read
	word    uint64 // its bits not yet given
	at      uint64 // the bit of its word's first position
	perPage int
}

// bits returns a cursor before node 1's bit.
func (r *ranks) bits() *bitCursor {
	if r.pages == nil {
		r.listPages()
	}
	return &bitCursor{r: r, p: -1, perPage: 1 << (r.pageShift - 6)}
}

// next returns the next node's bit; there must be one.
func (c *bitCursor) next() uint64 {
	for c.word == 0 {
		c.p++
		c.word = c.r.words[2*c.p+1]
		c.at = uint64(c.r.pages[c.p/c.perPage])<<c.r.pageShift | uint64(c.p%c.perPage)<<6
	}
	b := c.at | uint64(bits.TrailingZeros64(c.word))
	c.word &= c.word - 1
	return b
}

// find returns the node whose id is base+key.
func (r *ranks) find(key uint64) (uint32, bool) {
	if key&(1<<r.shift-1) != 0 {
		return 0, false
	}
	b := key >> r.shift
	pg := b >> r.pageShift
	if pg >= uint64(len(r.dir)) || r.dir[pg] == heapgraph.NoNode {
		return 0, false
	}
	i := r.pair(b)
	word, bit := r.words[i+1], uint64(1)<<(b&63)
	if word&bit == 0 {
		return 0, false
	}
	return uint32(r.words[i]) + uint32(bits.OnesCount64(word&(bit-1))), true
}

// drop clears the bit of base+key, for a node that is dropped; count must follow.
func (r *ranks) drop(key uint64) {
	b := key >> r.shift
	r.words[r.pair(b)+1] &^= 1 << (b & 63)
}

// dropLow lets the low bits go where the ranks find the nodes: a node's id is then where its bit
// is (ranks.bit), found in a logarithmic number of steps rather than read, which suits the few
// objects a report names. newObjectIDs makes no low bits where the ranks find the nodes; keep,
// when the first node goes, makes them again to rebuild from, and Park drops them.
func (x *objectIDs) dropLow() {
	if x.ranks.dir == nil {
		return
	}
	x.low, x.hiNode, x.hiVal = nil, nil, nil
	if x.ranks.pages == nil {
		x.ranks.listPages()
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
	if x.low == nil {
		return x.base + x.ranks.bit(i)<<x.ranks.shift
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
	if id < x.base {
		return 0, false
	}
	key := id - x.base
	if x.ranks.dir != nil {
		return x.ranks.find(key)
	}
	if len(x.bucket) == 0 {
		return 0, false
	}
	k := key >> x.shift
	if k >= uint64(len(x.bucket)-1) {
		return 0, false
	}
	lo, hi := x.bucket[k], x.bucket[k+1]
	if x.full != nil {
		if at := lowerBound(x.full, lo, hi, id); at < hi && x.full[at] == id {
			return at, true
		}
		return 0, false
	}
	want := uint32(key) // every node of the slot has key's high bits
	if at := lowerBound(x.low, lo, hi, want); at < hi && x.low[at] == want {
		return at, true
	}
	return 0, false
}

// lowerBound returns the first index in [lo, hi) of s, sorted there, whose value is not below
// want, or hi when none is.
func lowerBound[T uint32 | uint64](s []T, lo, hi uint32, want T) uint32 {
	for lo < hi {
		m := (lo + hi) >> 1
		if s[m] < want {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
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
		*x = newObjectIDs(x.mem, x.full[:w])
		return
	}
	if kept.has(1) {
		x.keepFirst(kept)
		return
	}
	if x.low == nil {
		// Rebuilt from the ids below, which the ranks alone hold: their bits, in order.
		c := x.ranks.bits()
		x.setLow(func(int) uint64 { return c.next() << x.ranks.shift })
	}
	base := uint64(0)
	var hiNode, hiVal []uint32
	s := &survey{}
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
		s.add(key)
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
		full := memory.Make[uint64](x.mem, int(w))
		for i := uint32(1); i < w; i++ {
			full[i] = x.at(i)
		}
		*x = objectIDs{n: int(w), base: base, full: full}
		x.index(nil)
		return
	}
	x.index(s)
}

// keepFirst is keep when the first node stays, as it nearly always does (a dump drops a few
// unreachable objects of millions): the base stays, and with it every kept node's low bits and
// the table's slot width. The low bits move down, a word of kept nodes at a time, and the
// table's entries and the nodes where the high bits change are renumbered by rank, without
// reading the ids again or rebuilding the table, which were much of the dropping's time.
func (x *objectIDs) keepFirst(kept bitset) {
	n := uint32(x.n)
	if x.ranks.dir != nil {
		// The dropped nodes' bits are cleared and the counts redone: the kept nodes' new
		// numbers are their ranks. A few dropped nodes are looked up one by one, from the last
		// down (without the low bits a node's id is found by counting the bits below its own,
		// which clearing a higher one leaves as they were); many, in one pass over the bits.
		dropped := int(n) - kept.count()
		if x.low != nil || dropped*64 < int(n) {
			for k := len(kept) - 1; k >= 0; k-- {
				for gone := ^kept[k]; gone != 0; gone &^= 1 << (63 - bits.LeadingZeros64(gone)) {
					if v := uint32(k)<<6 | uint32(63-bits.LeadingZeros64(gone)); v != 0 && v < n {
						x.ranks.drop(x.at(v) - x.base)
					}
				}
			}
		} else {
			x.ranks.eachBit(func(v uint32, b uint64) {
				if !kept.has(v) {
					x.ranks.drop(b << x.ranks.shift)
				}
			})
		}
		x.ranks.count()
		if x.low == nil {
			x.n = int(1 + kept.count() - int(kept[0]&1))
			return
		}
	}
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
