package jar

import (
	"archive/zip"
	"errors"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// Entries are inflated, and rewritten classes deflated (process), with klauspost/compress's
// flate rather than the standard library's: a jar's classes are small entries each compressed
// on its own, where that implementation deflates about three times as fast at level 1 (for
// output about 2% larger) and inflates about a third faster; the two together were half the
// CPU time of rewriting a jar (docs/rewrite-benchmarks.md). The format is the same DEFLATE
// every JDK reads.

// inflaters keeps inflaters between entries, as archive/zip keeps its own: each holds a 32 KB
// window and its tables.
var inflaters sync.Pool

// useInflater has zr inflate its deflated entries with a pooled klauspost inflater.
func useInflater(zr *zip.Reader) {
	zr.RegisterDecompressor(zip.Deflate, newInflater)
}

func newInflater(r io.Reader) io.ReadCloser {
	fr, ok := inflaters.Get().(io.ReadCloser)
	if ok {
		fr.(flate.Resetter).Reset(r, nil)
	} else {
		fr = flate.NewReader(r)
	}
	return &pooledInflater{fr: fr}
}

// pooledInflater gives its inflater back to the pool when closed.
type pooledInflater struct {
	mu sync.Mutex // Close may race a Read of another goroutine, as with archive/zip's own
	fr io.ReadCloser
}

var errInflaterClosed = errors.New("jar: read of a closed entry")

func (p *pooledInflater) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fr == nil {
		return 0, errInflaterClosed
	}
	return p.fr.Read(b)
}

func (p *pooledInflater) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fr == nil {
		return nil
	}
	err := p.fr.Close()
	inflaters.Put(p.fr)
	p.fr = nil
	return err
}
