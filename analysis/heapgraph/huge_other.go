//go:build !linux

package heapgraph

import (
	"os"
	"sync/atomic"
)

// adviseHuge does nothing where transparent huge pages and populating madvise are not Linux's
// to give.
func adviseHuge[T ~uint8 | ~uint32 | ~uint64](a []T, fill bool) {}

func faultAhead[T ~uint8 | ~uint32 | ~uint64](a []T, from, to int) {}

func faultsDone() {}

// Populate cannot fault pages in ahead here: it reports false.
func Populate[T ~uint8 | ~uint32 | ~uint64](a []T, done *atomic.Int64) bool { return cap(a) == 0 }

// Resident cannot tell the resident memory here.
func Resident() int64 { return -1 }

// PeakResident is not known here: it reports -1.
func PeakResident() int64 { return -1 }

// release leaves b as it is where there is no madvise to give its pages back with.
func release(b []byte) {}

// Cached cannot tell here whether the page cache holds a file's pages: it reports true, as the
// Linux one does where it cannot tell.
func Cached(f *os.File, off, n int64) bool { return true }

// dropCache leaves the page cache as it is here.
func dropCache(f *os.File, off, n int64) {}

// mapFiles maps nothing here: Map reads the files instead.
func mapFiles(files []*os.File, part, total int, populate bool) []byte { return nil }

func unmap(b []byte) {}
