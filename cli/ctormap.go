package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/internal/outfile"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/ctormap"
	"github.com/heapledger/heapledger/rewrite/transform"
)

func init() {
	rewriteCmd.Flags = append(rewriteCmd.Flags, &cli.StringFlag{Name: "ctor-map",
		Usage: "also write the constructor map to FILE: every constructor -> the alternate or superclass constructor it invokes (section 4 of the array/object profiling paper); constructors that invoke different ones on different paths are warned about"})
}

// ctorMapper wraps a pass and records the constructor map of every class it sees, from the
// class as it was before the pass.
type ctorMapper struct {
	inner   transform.Class
	mu      sync.Mutex
	entries []ctormap.Entry
	errs    []string
}

func (m *ctorMapper) TransformClass(name string, data []byte) (transform.Result, error) {
	return m.TransformClassInTurn(name, data, nil)
}

// TransformClassInTurn keeps the order of the pass it wraps (transform.Ordered).
func (m *ctorMapper) TransformClassInTurn(name string, data []byte, turn *transform.Turn) (transform.Result, error) {
	if cf, err := classfile.Parse(data); err == nil {
		es, err := ctormap.ForClass(cf)
		m.mu.Lock()
		if err != nil {
			m.errs = append(m.errs, fmt.Sprintf("%s: %v", name, err))
		}
		m.entries = append(m.entries, es...)
		m.mu.Unlock()
	} else if !errors.Is(err, classfile.ErrUnsupportedVersion) {
		m.mu.Lock()
		m.errs = append(m.errs, fmt.Sprintf("%s: %v", name, err))
		m.mu.Unlock()
	}
	return transform.InTurn(m.inner, name, data, turn)
}

// write saves the map and prints its warnings (and classes it could not analyse) to stderr.
func (m *ctorMapper) write(path string, stderr io.Writer) error {
	var buf bytes.Buffer
	if err := ctormap.Write(&buf, m.entries); err != nil {
		return err
	}
	if err := outfile.WriteFile(path, buf.Bytes(), outfile.Data); err != nil {
		return fmt.Errorf("--ctor-map %s: %w", path, err)
	}
	warned := 0
	for _, e := range m.entries {
		if e.Warning != "" {
			fmt.Fprintf(stderr, "warning: constructor map: %s\n", e.Warning)
			warned++
		}
	}
	for _, e := range m.errs {
		fmt.Fprintf(stderr, "warning: constructor map: not analysed: %s\n", e)
	}
	fmt.Fprintf(stderr, "constructor map: %d constructors written to %s (%d warnings, %d classes not analysed)\n", len(m.entries), path, warned, len(m.errs))
	return nil
}
