//go:build linux

package memory

import (
	"os"
	"syscall"
	"unsafe"
)

// canPage says the system maps files, and paging can be turned on.
const canPage = true

// mapFile makes a file of size bytes in dir, unlinked at once, and maps it shared and writable.
// The file is sparse: pages never written take no disk, as an array's never touched take no
// memory.
func mapFile(dir string, size uintptr) (pagedArray, error) {
	f, err := os.CreateTemp(dir, "heapledger-array-*")
	if err != nil {
		return pagedArray{}, err
	}
	os.Remove(f.Name())
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		return pagedArray{}, err
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return pagedArray{}, err
	}
	m, err := syscall.Mmap(fd, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		syscall.Close(fd)
		return pagedArray{}, err
	}
	return pagedArray{fd: fd, mem: m, addr: uintptr(unsafe.Pointer(unsafe.SliceData(m))), size: size}, nil
}

// adviseLarge asks for transparent huge pages on a's mapping (MADV_HUGEPAGE): the page cache
// then reads the file ahead in 2 MB folios, which a fault maps whole where the mapping is
// aligned (the kernel aligns mappings this large). A kernel or file system without them
// ignores it.
func adviseLarge(a pagedArray) {
	const hugePage = 14 // MADV_HUGEPAGE
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, a.addr, a.size, hugePage)
}

// unmapPages ends the process's mapping of a's pages: they stop counting as its resident memory,
// what was written in them stays in the page cache, and a later touch maps them again.
func unmapPages(a pagedArray) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, a.addr, a.size, syscall.MADV_DONTNEED)
}

// writeBack starts writing a's dirty pages to its file, without waiting: clean, the page cache
// may drop them under pressure, where dirty ones it must write first.
func writeBack(a pagedArray) {
	const write = 2 // SYNC_FILE_RANGE_WRITE
	_, _, _ = syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, uintptr(a.fd), 0, 0, write, 0, 0)
}

// freePages gives the whole pages of bytes [off, off+n) of a back: unmapped, and their blocks
// and page cache freed (a hole punched in the file), so that they read as zeros afterwards.
func freePages(a pagedArray, off, n uintptr) {
	const punchHole = 0x02 | 0x01 // FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, a.addr+off, n, syscall.MADV_DONTNEED)
	_, _, _ = syscall.Syscall6(syscall.SYS_FALLOCATE, uintptr(a.fd), punchHole, off, n, 0, 0)
}

// closeArray lets a's file go: its pages are replaced by fresh anonymous ones, untouched and so
// taking no memory, rather than unmapped, so that a goroutine of a phase that failed or was
// cancelled and has not ended yet reads zeros there instead of faulting the process; the address
// range stays reserved.
func closeArray(a pagedArray) {
	const flags = syscall.MAP_PRIVATE | syscall.MAP_ANON | syscall.MAP_FIXED
	_, _, errno := syscall.Syscall6(syscall.SYS_MMAP, a.addr, a.size, syscall.PROT_READ|syscall.PROT_WRITE, flags, ^uintptr(0), 0)
	if errno != 0 {
		_ = syscall.Munmap(a.mem)
	}
	syscall.Close(a.fd)
}
