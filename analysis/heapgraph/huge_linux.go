//go:build linux

package heapgraph

import (
	"syscall"
	"unsafe"
)

func adviseHuge[T ~uint8 | ~uint32 | ~uint64](a []T) {
	if cap(a) == 0 {
		return
	}
	var z T
	size := uintptr(cap(a)) * unsafe.Sizeof(z)
	if size < hugeMin {
		return
	}
	// Only the whole huge pages inside the array: advice on a neighbour's bytes is not ours to give.
	const huge = 2 << 20
	all := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(a))), size)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(all)))
	from := ((start + huge - 1) &^ (huge - 1)) - start
	to := ((start + size) &^ (huge - 1)) - start
	if to <= from {
		return
	}
	_ = syscall.Madvise(all[from:to], 14) // MADV_HUGEPAGE
}
