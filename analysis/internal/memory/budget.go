// Package memory gives the phases of a heap analysis their big arrays and moves the columns a
// phase does not read out to files and back. All of it goes through a Budget, which a caller
// makes for one analysis and closes at its end: the goroutine that faults pages in ahead, the
// page cache the analysis may take its memory from, the directory of its files and the tally of
// columns that could not go out are the Budget's, never the process's, so two analyses in one
// process do not share them.
//
// A nil *Budget is valid everywhere: arrays are plain make, nothing is faulted in ahead, and
// columns go to the system's temporary directory.
package memory

import "os"

// Budget is what one analysis may use: the memory (Limit), and where its files go (Dir).
type Budget struct {
	limit int64  // bytes; 0: no limit
	dir   string // "": the system's temporary directory

	faults faulter     // see Make
	cache  cacheDonor  // see GiveCache
	kept   keptColumns // see SpillFailures
	paged  pager       // see Page
}

// New returns a budget of limit bytes (0: none) whose files go to dir (the system's temporary
// directory when dir is "").
func New(limit int64, dir string) *Budget {
	return &Budget{limit: limit, dir: dir, cache: cacheDonor{batch: givingBatch}}
}

// Limit returns the budget's bytes, 0 when it has none.
func (b *Budget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit
}

// Dir returns the directory the budget's files go to.
func (b *Budget) Dir() string {
	if b == nil || b.dir == "" {
		return os.TempDir()
	}
	return b.dir
}

// Close ends the budget's goroutines and lets go of the file whose page cache it was giving.
// Arrays it made in memory stay valid; those it made from files (see Page) read as zeros
// afterwards, their files gone. Nothing of it may be used afterwards.
func (b *Budget) Close() {
	if b == nil {
		return
	}
	b.faults.stop()
	b.cache.stop()
	b.paged.close()
}
