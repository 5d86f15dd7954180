package memory

import (
	"fmt"
	"os"
	"sync"
)

// The memory an analysis takes comes cheapest as pages the system has just freed. On a virtual
// machine that reports its free memory to the host (free page reporting, as Firecracker's
// guests do), memory left free for a second or two goes back to the host, and a page taken
// after that comes back from the host, which clears it, far more slowly than a page freed a
// moment before comes. An analysis takes gigabytes of fresh memory phase after phase, and
// clearing it was a large share of its CPU time.
//
// A dump read for the last time leaves its pages in the page cache, as much memory as the
// file's size, of no more use to the analysis. GiveCache has them dropped a batch at a time as
// arrays are made, so that the arrays take the pages just dropped.

// cacheDonor is the file whose page cache GiveCache gives, and how much of it is left.
type cacheDonor struct {
	mu    sync.Mutex
	f     *os.File
	left  int64 // bytes [0, left) of f are not dropped yet; they go from the end down
	ahead int64 // bytes dropped that no array has taken yet
	given int64 // bytes dropped so far, over every file given
	batch int64 // how much is dropped at a time (givingBatch; tests set less)
}

// givingBatch is how much page cache is dropped at a time, for the arrays to take. The pages of
// a file read into the page cache lie all over memory in small pieces: dropped an array's size
// at a time (mostly 2 MB, the faulter's step) they seldom made whole free huge pages, and the
// arrays' huge pages came from memory the host had to back afresh all the same; 128 MB at a time
// mostly do, where much more at a time left part of it unused long enough for the system to hand
// it back to the host (docs/heapdump-benchmarks.md).
const givingBatch = 128 << 20

// donateMin is the smallest array whose making drops cache: a smaller one mostly takes memory
// the Go runtime holds already.
const donateMin = 64 << 10

// GiveCache makes the page cache of the file at path the memory the big arrays b makes from now
// on take (Make, and the pages FaultAhead and Populate fault in): before each, as many bytes of
// the file, from its end down, are dropped from the page cache, until the whole file is or stop
// is called. Only clean pages are dropped, so nothing the file holds changes; a later read of a
// dropped part reads it from disk again. From its end down, so that a file partly dropped does
// not look cached to a reader that asks at its end (see Cached). It fails if the file cannot
// be opened or is no regular file (a pipe, which opening could block on, has no page cache to
// give); where the system cannot drop pages, giving does nothing.
func (b *Budget) GiveCache(path string) (stop func(), err error) {
	st, err := os.Stat(path) // before opening, which would wait for a pipe's writer
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file, no page cache to give", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	c := &b.cache
	c.mu.Lock()
	if c.f != nil {
		c.f.Close()
	}
	c.f, c.left, c.ahead = f, st.Size(), 0
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.f == f {
			f.Close()
			c.f = nil
		}
	}, nil
}

// stop lets go of the file being given, if any.
func (c *cacheDonor) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f != nil {
		c.f.Close()
		c.f = nil
	}
}

// cacheGiven returns how many bytes of page cache GiveCache has had dropped so far.
func (b *Budget) cacheGiven() int64 {
	b.cache.mu.Lock()
	defer b.cache.mu.Unlock()
	return b.cache.given
}

// donate has n bytes of the given file's page cache, if there is one, dropped ahead of memory
// about to be taken: from what an earlier batch left, and a new batch if that is not enough.
func (b *Budget) donate(n int64) {
	if b == nil || n < donateMin {
		return
	}
	c := &b.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.f
	if f == nil {
		return
	}
	if n <= c.ahead {
		c.ahead -= n
		return
	}
	n -= c.ahead
	k := min(max(n, c.batch), c.left)
	c.ahead = max(0, k-n)
	c.left -= k
	dropCache(f, c.left, k)
	c.given += k
	if c.left == 0 {
		f.Close()
		c.f = nil
	}
}
