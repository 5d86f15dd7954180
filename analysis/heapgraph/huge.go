package heapgraph

// hugeMin is the size from which Make asks for huge pages: below it the saving is small, and
// a dump of a few dozen megabytes, where fixed costs leave the least room, keeps 4 KB granularity.
const hugeMin = 32 << 20

// Make returns a zeroed slice of n elements, like make, asking the kernel to back a large one
// with transparent huge pages where the system leaves that to the program (the "madvise"
// setting). A heap analysis touches gigabytes of fresh arrays phase after phase, and with 4 KB
// pages it faults every one in: on a virtual machine that was a third of the run. The advice
// is only advice: where the kernel has none to give, or refuses, nothing changes.
func Make[T ~uint8 | ~uint32 | ~uint64](n int) []T {
	a := make([]T, n)
	adviseHuge(a)
	return a
}
