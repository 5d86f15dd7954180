package heapgraph

import (
	"os"
	"sync"
)

// The memory an analysis takes comes cheapest as pages the system has just freed. On a virtual
// machine that reports its free memory to the host (free page reporting, as Firecracker's
// guests do), memory left free for a second or two goes back to the host, and a page taken
// after that comes back from the host, which clears it: on the benchmark machine 1.3-2.4 ms per
// MB, against 0.05 ms for a page freed a moment before. A dump of 2 GB has the analysis take
// about 5 GB of fresh memory phase after phase, and the clearing was 40% of its CPU time.
//
// A dump read for the last time leaves its pages in the page cache, as much memory as the
// file's size, of no more use to the analysis. GiveCache has them dropped a few at a time, each
// time an array is made, so that the array takes the pages just dropped.

// cacheDonor is the file whose page cache GiveCache gives, and how much of it is left.
var cacheDonor struct {
	mu    sync.Mutex
	f     *os.File
	left  int64 // bytes [0, left) of f are not dropped yet; they go from the end down
	given int64 // bytes dropped so far, over every file given
}

// donateMin is the smallest array whose making drops cache: a smaller one mostly takes memory
// the Go runtime holds already.
const donateMin = 64 << 10

// GiveCache makes the page cache of the file at path the memory the big arrays made from now on
// take (Make, and the pages FaultAhead and Populate fault in): before each, as many bytes of the
// file, from its end down, are dropped from the page cache, until the whole file is or stop is
// called. Only clean pages are dropped, so nothing the file holds changes; a later read of a
// dropped part reads it from disk again. From its end down, so that a file partly dropped does
// not look cached to a reader that asks at its end (see Cached). It fails only if the file
// cannot be opened; where the system cannot drop pages, giving does nothing.
func GiveCache(path string) (stop func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	cacheDonor.mu.Lock()
	if cacheDonor.f != nil {
		cacheDonor.f.Close()
	}
	cacheDonor.f, cacheDonor.left = f, st.Size()
	cacheDonor.mu.Unlock()
	return func() {
		cacheDonor.mu.Lock()
		defer cacheDonor.mu.Unlock()
		if cacheDonor.f == f {
			f.Close()
			cacheDonor.f = nil
		}
	}, nil
}

// CacheGiven returns how many bytes of page cache GiveCache has had dropped so far.
func CacheGiven() int64 {
	cacheDonor.mu.Lock()
	defer cacheDonor.mu.Unlock()
	return cacheDonor.given
}

// donate drops n bytes of the given file's page cache, if there is one, ahead of memory about to
// be taken.
func donate(n int64) {
	if n < donateMin {
		return
	}
	cacheDonor.mu.Lock()
	defer cacheDonor.mu.Unlock()
	f := cacheDonor.f
	if f == nil {
		return
	}
	k := min(n, cacheDonor.left)
	cacheDonor.left -= k
	dropCache(f, cacheDonor.left, k)
	cacheDonor.given += k
	if cacheDonor.left == 0 {
		f.Close()
		cacheDonor.f = nil
	}
}
