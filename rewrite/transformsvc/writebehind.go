package transformsvc

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/heapledger/heapledger/internal/filecache"
)

// Entries are written to the cache when the JVM has stopped loading classes for a moment, or
// when the service ends, not as each class is answered: a first run writes thousands of small
// files, and on the two cores of a small machine those writes (measured: about 0.2 ms each on
// ext4, with the journal's work besides) slowed the very start-up the cache is for by half.
const (
	// idleBeforeWrite is how long no class must have come before the entries are written.
	idleBeforeWrite = 300 * time.Millisecond
	// maxPendingBytes bounds what waits in memory; past it entries are written at once.
	maxPendingBytes = 64 << 20
)

type pendingEntry struct {
	key   filecache.Key
	value []byte
}

// writeBehind holds the entries of classes answered but not yet stored.
type writeBehind struct {
	store *filecache.Cache
	fail  func(error)   // told each failed write
	wait  time.Duration // idleBeforeWrite, but for tests

	mu      sync.Mutex
	pending []pendingEntry
	bytes   int

	lastRequest atomic.Int64 // UnixNano of the last class received
	stop        chan struct{}
	stopped     chan struct{}
}

func newWriteBehind(store *filecache.Cache, wait time.Duration, fail func(error)) *writeBehind {
	w := &writeBehind{store: store, fail: fail, wait: wait, stop: make(chan struct{}), stopped: make(chan struct{})}
	w.lastRequest.Store(time.Now().UnixNano())
	go w.run()
	return w
}

// received notes that a class came in, which postpones the writing.
func (w *writeBehind) received() { w.lastRequest.Store(time.Now().UnixNano()) }

func (w *writeBehind) idle() bool {
	return time.Since(time.Unix(0, w.lastRequest.Load())) >= w.wait
}

// add queues an entry, or writes the queue at once when it holds too much.
func (w *writeBehind) add(k filecache.Key, value []byte) {
	w.mu.Lock()
	w.pending = append(w.pending, pendingEntry{k, value})
	w.bytes += len(value)
	full := w.bytes > maxPendingBytes
	w.mu.Unlock()
	if full {
		w.write(func() bool { return true })
	}
}

// write stores queued entries while more() says so, oldest first, and keeps the rest queued.
func (w *writeBehind) write(more func() bool) {
	for more() {
		w.mu.Lock()
		if len(w.pending) == 0 {
			w.mu.Unlock()
			return
		}
		e := w.pending[0]
		w.pending[0] = pendingEntry{}
		w.pending = w.pending[1:]
		w.bytes -= len(e.value)
		w.mu.Unlock()
		if err := w.store.Put(e.key, e.value); err != nil {
			w.fail(err)
		}
	}
}

// run writes the queue whenever the JVM is between bursts of class loading, and stops
// writing as soon as a class comes again.
func (w *writeBehind) run() {
	defer close(w.stopped)
	t := time.NewTicker(min(w.wait/3, time.Second))
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			if w.idle() {
				w.write(w.idle)
			}
		}
	}
}

// close writes everything still queued: the service is ending.
func (w *writeBehind) close() {
	close(w.stop)
	<-w.stopped
	w.write(func() bool { return true })
}
