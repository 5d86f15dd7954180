//go:build !linux

package memory

import (
	"os"
	"sync/atomic"
)

// adviseHuge does nothing where transparent huge pages and populating madvise are not Linux's
// to give.
func adviseHuge[T ~uint8 | ~uint32 | ~uint64](b *Budget, a []T, fill bool) {}

func faultAhead[T ~uint8 | ~uint32 | ~uint64](b *Budget, a []T, from, to int) {}

// faulter faults nothing in ahead here.
type faulter struct{}

func (b *Budget) faulter() *faulter { return nil }
func (f *faulter) done()            {}
func (f *faulter) stop()            {}

// Populate cannot fault pages in ahead here: it reports false.
func Populate[T ~uint8 | ~uint32 | ~uint64](b *Budget, a []T, done *atomic.Int64) bool {
	return cap(a) == 0
}

// Resident cannot tell the resident memory here.
func Resident() int64 { return -1 }

// release leaves p as it is where there is no madvise to give its pages back with.
func (b *Budget) release(p []byte) {}

// Cached cannot tell here whether the page cache holds a file's pages: it reports true, as the
// Linux one does where it cannot tell.
func Cached(f *os.File, off, n int64) bool { return true }

// dropCache leaves the page cache as it is here.
func dropCache(f *os.File, off, n int64) {}

// mapFiles maps nothing here: Map reads the files instead.
func mapFiles(files []*os.File, part, total int, populate bool) []byte { return nil }

func unmap(b []byte) {}
