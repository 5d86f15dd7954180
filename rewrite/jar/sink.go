package jar

import (
	"archive/zip"
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/heapledger/heapledger/internal/outfile"
)

// sink receives the output entries in order. Nothing is visible at the output path until commit.
type sink interface {
	isDir() bool
	// copy writes an entry unchanged (raw from a jar to a jar).
	copy(e *Entry, lim Limits) error
	// rewritten writes the pass's new bytes for a class.
	rewritten(e *Entry, j *job) error
	// write writes new contents for a non-class entry (the edited manifest of a signed jar).
	write(e *Entry, data []byte) error
	commit() error
	abort()
}

type jarSink struct {
	f  *outfile.File
	bw *bufio.Writer
	zw *zip.Writer
}

func newJarSink(output, comment string) (*jarSink, error) {
	f, err := outfile.Create(output, outfile.Data)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	zw := zip.NewWriter(bw)
	if comment != "" {
		if err := zw.SetComment(comment); err != nil {
			f.Abort()
			return nil, err
		}
	}
	return &jarSink{f: f, bw: bw, zw: zw}, nil
}

func (s *jarSink) isDir() bool { return false }

func (s *jarSink) copy(e *Entry, lim Limits) error {
	if e.zf != nil && e.IsDir() && e.Header.CompressedSize64 > 0 {
		// The jar tool deflates directory entries into a 2-byte empty stream, which archive/zip
		// refuses to write for a directory. The content (nothing) is the same stored.
		h := freshHeader(e, zip.Store)
		if _, err := s.zw.CreateRaw(&h); err != nil {
			return fmt.Errorf("%s: %w", e, err)
		}
		return nil
	}
	if e.zf != nil {
		if err := s.zw.Copy(e.zf); err != nil {
			return fmt.Errorf("%s: %w", e, err)
		}
		return nil
	}
	h := e.Header
	w, err := s.zw.CreateHeader(&h)
	if err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	if e.IsDir() {
		return nil
	}
	r, err := e.Open(lim)
	if err != nil {
		return err
	}
	defer r.Close()
	if _, err := io.Copy(w, r); err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	return nil
}

func (s *jarSink) rewritten(e *Entry, j *job) error {
	h := e.Header
	h.Method = j.method
	h.CRC32 = j.crc
	h.CompressedSize64 = uint64(len(j.comp))
	h.UncompressedSize64 = uint64(len(j.res.Data))
	h.CompressedSize = clamp32(h.CompressedSize64)
	h.UncompressedSize = clamp32(h.UncompressedSize64)
	w, err := s.zw.CreateRaw(&h)
	if err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	if _, err := w.Write(j.comp); err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	return nil
}

func (s *jarSink) write(e *Entry, data []byte) error {
	h := freshHeader(e, zip.Deflate)
	w, err := s.zw.CreateHeader(&h)
	if err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	return nil
}

func (s *jarSink) commit() error {
	err := s.zw.Close()
	if err == nil {
		err = s.bw.Flush()
	}
	if err != nil {
		s.f.Abort()
		return err
	}
	return s.f.Commit()
}

func (s *jarSink) abort() { s.f.Abort() }

// freshHeader is e's header (name, times, comment, extra) for new contents: the sizes and CRC
// of the old contents must not reach the writer.
func freshHeader(e *Entry, method uint16) zip.FileHeader {
	h := e.Header
	h.Method = method
	h.CRC32, h.CompressedSize64, h.UncompressedSize64, h.CompressedSize, h.UncompressedSize = 0, 0, 0, 0, 0
	return h
}

func clamp32(n uint64) uint32 {
	if n > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(n)
}

type dirSink struct {
	d   *outfile.Dir
	tmp string
}

func newDirSink(output string) (*dirSink, error) {
	d, err := outfile.CreateDir(output)
	if err != nil {
		return nil, err
	}
	return &dirSink{d: d, tmp: d.Path}, nil
}

func (s *dirSink) isDir() bool { return true }

// target is where an entry goes; merge has already refused names that would escape tmp.
func (s *dirSink) target(e *Entry) (string, error) {
	p := filepath.Join(s.tmp, filepath.FromSlash(e.Name))
	if err := os.MkdirAll(filepath.Dir(p), outfile.Executable); err != nil {
		return "", fmt.Errorf("%s: %w", e, err)
	}
	return p, nil
}

func (s *dirSink) copy(e *Entry, lim Limits) error {
	p, err := s.target(e)
	if err != nil {
		return err
	}
	if e.IsDir() {
		if err := os.MkdirAll(p, outfile.Executable); err != nil {
			return fmt.Errorf("%s: %w", e, err)
		}
		return nil
	}
	r, err := e.Open(lim)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, outfile.Data)
	if err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	return s.touch(p, e.Header.Modified)
}

func (s *dirSink) rewritten(e *Entry, j *job) error { return s.write(e, j.res.Data) }

func (s *dirSink) write(e *Entry, data []byte) error {
	p, err := s.target(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, outfile.Data)
	if err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	return s.touch(p, e.Header.Modified)
}

// touch keeps the entry's modification time, so build tools comparing times see what the jar said.
func (s *dirSink) touch(p string, mod time.Time) error {
	if mod.IsZero() {
		return nil
	}
	return os.Chtimes(p, mod, mod)
}

// commit renames the directory into place; checkEmptyDir allowed an existing output only when
// empty.
func (s *dirSink) commit() error { return s.d.Commit() }

func (s *dirSink) abort() { s.d.Abort() }

// classSink writes a class file: the output of a rewrite of exactly one class.
type classSink struct {
	f *outfile.File
}

func newClassSink(output string, entries []*Entry) (*classSink, error) {
	if len(entries) != 1 {
		return nil, fmt.Errorf("%s: a .class output holds one class, but the inputs hold %d entries; rewrite one class file to a .class output, or write a jar or a directory", output, len(entries))
	}
	if !IsClass(entries[0].Name) {
		return nil, fmt.Errorf("%s: a .class output holds one class to rewrite, and %s is not one", output, entries[0])
	}
	f, err := outfile.Create(output, outfile.Data)
	if err != nil {
		return nil, err
	}
	return &classSink{f: f}, nil
}

// isDir is false: the run compresses the rewritten class as for a jar, which costs one class's
// deflate; the uncompressed bytes are still there for rewritten.
func (s *classSink) isDir() bool { return false }

func (s *classSink) copy(e *Entry, lim Limits) error {
	r, err := e.Open(lim)
	if err != nil {
		return err
	}
	defer r.Close()
	if _, err := io.Copy(s.f, r); err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	return nil
}

func (s *classSink) rewritten(e *Entry, j *job) error { return s.write(e, j.res.Data) }

func (s *classSink) write(e *Entry, data []byte) error {
	if _, err := s.f.Write(data); err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	return nil
}

func (s *classSink) commit() error { return s.f.Commit() }

func (s *classSink) abort() { s.f.Abort() }
