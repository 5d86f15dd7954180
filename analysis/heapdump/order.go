package heapdump

import (
	"cmp"
	"slices"

	"github.com/heapledger/heapledger/analysis/internal/cores"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// order puts the nodes in ascending id order. HotSpot writes the class dumps first and then the
// heap in address order, so the common case is "sorted apart from the class dumps": those few
// are set aside, the rest slides down, and the two sorted sequences are merged from the back —
// sequential passes, no extra per-node memory, and pass 2 can find a record's node by counting
// (l.mainInOrder). Any other order is sorted in full, and the inverse permutation is kept for
// pass 2 in l.inv.
func (l *loader) order() {
	n := len(l.ids)
	if slices.IsSorted(l.ids[1:]) {
		l.mainInOrder = true
		return
	}
	// The class records are found, and the others checked to ascend, in two halves on two cores
	// (on one, a large share of the ordering, with the other core idle).
	type scan struct {
		few         []uint32
		sorted      bool
		first, last uint64 // the half's first and last non-class ids
		started     bool
	}
	scanFrom := func(lo, hi int) (sc scan) {
		sc.sorted = true
		for i := lo; i < hi; i++ {
			if l.kind[i] == KindClass {
				sc.few = append(sc.few, uint32(i))
				continue
			}
			if sc.started && l.ids[i] < sc.last {
				sc.sorted = false
				break
			}
			if !sc.started {
				sc.first = l.ids[i]
			}
			sc.last, sc.started = l.ids[i], true
		}
		return sc
	}
	mid := max(1, n/2)
	var a, b scan
	cores.Both(func() { a = scanFrom(1, mid) }, func() { b = scanFrom(mid, n) })
	few := append(a.few, b.few...)
	sorted := a.sorted && b.sorted && (!a.started || !b.started || a.last <= b.first)
	if sorted && len(few) <= n/4 {
		l.mergeClasses(few)
		l.mainInOrder = true
		return
	}
	ord := memory.Make[uint32](l.mem, n)
	for i := range ord {
		ord[i] = uint32(i)
	}
	ids := l.ids
	slices.SortFunc(ord[1:], func(a, b uint32) int { return cmp.Compare(ids[a], ids[b]) })
	l.permuteInPlace(ord)
	l.inv = ord
}

func (l *loader) mergeClasses(few []uint32) {
	if len(few) == 0 {
		return
	}
	type rec struct {
		id  uint64
		cls uint32
		aux uint32
		deg uint32
	}
	saved := make([]rec, len(few))
	for j, i := range few {
		saved[j] = rec{l.ids[i], l.cls[i], l.aux[i], l.deg[i]}
	}
	slices.SortFunc(saved, func(a, b rec) int { return cmp.Compare(a.id, b.id) })
	if int(few[len(few)-1]) == len(few) && mergeLeadingOn {
		l.mergeLeading(len(few), func(j int) (uint64, uint32, uint32, uint32) {
			return saved[j].id, saved[j].cls, saved[j].aux, saved[j].deg
		})
		return
	}
	// The rest slides down over the class records, a run between two of them at a time (few
	// ascends); then, last class first, the records with greater ids move up above each and
	// it takes the slot below them. Whole runs move as blocks, a copy per class record rather
	// than one per record.
	n := len(l.ids)
	w := int(few[0])
	for j, i := range few {
		end := n
		if j+1 < len(few) {
			end = int(few[j+1])
		}
		l.moveNodes(w, int(i)+1, end)
		w += end - int(i) - 1
	}
	hi, k := w, n
	for j := len(saved) - 1; j >= 0; j-- {
		s := saved[j]
		p, _ := slices.BinarySearchFunc(l.ids[1:hi], s.id, func(id, target uint64) int {
			if id <= target {
				return -1
			}
			return 1
		})
		p++ // the first record after the class: ids from 1 on
		k -= hi - p
		l.moveNodes(k, p, hi)
		hi = p
		k--
		l.ids[k], l.cls[k], l.kind[k], l.aux[k], l.deg[k] = s.id, s.cls, KindClass, s.aux, s.deg
	}
}

// mergeLeadingOn lets tests hold mergeLeading to the general merge.
var mergeLeadingOn = true

// mergeLeading is mergeClasses for k class records that lead the file (positions 1 to k, as
// HotSpot writes them), class(j) giving the j-th in ascending id order. In one pass from the
// front, each record moves once, to where it ends: the runs of other records between two
// classes' places move down as blocks, each class taking its slot behind them. A record is
// written no further on than it was read from, so nothing unread is overwritten. The ids move on
// one core, the other columns on the other, the classes' places found first.
func (l *loader) mergeLeading(k int, class func(j int) (id uint64, cls, aux, deg uint32)) {
	n := len(l.ids)
	rest := l.ids[k+1:]
	// at[j]: how many other records go before class j, those with ids up to its own.
	at := make([]int, k)
	for j := range k {
		id, _, _, _ := class(j)
		at[j], _ = slices.BinarySearchFunc(rest, id, func(x, target uint64) int {
			if x <= target {
				return -1
			}
			return 1
		})
	}
	// Both walks go the same way: runs of other records, each followed by a class.
	walk := func(move func(dst, from, to int), put func(p, j int)) {
		p, r := 1, k+1
		for j := range k {
			end := k + 1 + at[j]
			move(p, r, end)
			p += end - r
			r = end
			put(p, j)
			p++
		}
		move(p, r, n)
	}
	cores.Both(func() {
		walk(func(dst, from, to int) { copy(l.ids[dst:], l.ids[from:to]) },
			func(p, j int) { l.ids[p], _, _, _ = class(j) })
	}, func() {
		walk(func(dst, from, to int) {
			copy(l.cls[dst:], l.cls[from:to])
			copy(l.kind[dst:], l.kind[from:to])
			copy(l.aux[dst:], l.aux[from:to])
			copy(l.deg[dst:], l.deg[from:to])
		}, func(p, j int) {
			_, l.cls[p], l.aux[p], l.deg[p] = class(j)
			l.kind[p] = KindClass
		})
	})
}

// moveNodes moves the records [from, to) of every per-node array to start at dst (the ranges
// may overlap).
func (l *loader) moveNodes(dst, from, to int) {
	if dst == from || from >= to {
		return
	}
	copy(l.ids[dst:], l.ids[from:to])
	copy(l.cls[dst:], l.cls[from:to])
	copy(l.kind[dst:], l.kind[from:to])
	copy(l.aux[dst:], l.aux[from:to])
	copy(l.deg[dst:], l.deg[from:to])
}

// permuteInPlace rearranges the per-node arrays so that position i receives what was at ord[i],
// following the permutation's cycles so that no array is copied; then it turns ord into its
// inverse (file-order index → node), which pass 2 needs.
func (l *loader) permuteInPlace(ord []uint32) {
	n := len(ord)
	done := newBitset(n)
	for s := 0; s < n; s++ {
		if done.has(uint32(s)) || ord[s] == uint32(s) {
			continue
		}
		id, cl, kd, ax, dg := l.ids[s], l.cls[s], l.kind[s], l.aux[s], l.deg[s]
		j := s
		for {
			done.set(uint32(j))
			k := int(ord[j])
			if k == s {
				l.ids[j], l.cls[j], l.kind[j], l.aux[j], l.deg[j] = id, cl, kd, ax, dg
				break
			}
			l.ids[j], l.cls[j], l.kind[j], l.aux[j], l.deg[j] = l.ids[k], l.cls[k], l.kind[k], l.aux[k], l.deg[k]
			j = k
		}
	}
	// Invert ord cycle by cycle.
	clear(done)
	for s := 0; s < n; s++ {
		if done.has(uint32(s)) {
			continue
		}
		prev, cur := uint32(s), ord[s]
		done.set(uint32(s))
		for cur != uint32(s) {
			next := ord[cur]
			ord[cur] = prev
			done.set(cur)
			prev, cur = cur, next
		}
		ord[s] = prev
	}
}
