package jar

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// Limits bound what a hostile or broken archive can make the pipeline read into memory or write
// to disk. Entries copied raw from jar to jar are never decompressed, so the limits apply only to
// entries that are inflated: classes (which are rewritten) and everything written to a directory.
type Limits struct {
	// MaxEntrySize is the largest declared uncompressed size of one inflated entry.
	MaxEntrySize int64
	// MaxRatio is the largest uncompressed/compressed ratio of one inflated entry larger than
	// ratioFloor; real jars stay far below 100, zip bombs far above 1000.
	MaxRatio int64
}

// DefaultLimits are generous for every real jar we know (the largest class files of the corpus
// are a few hundred KiB, icu4j's data resources a few MiB) and still stop a zip bomb before it
// fills memory or disk.
var DefaultLimits = Limits{MaxEntrySize: 512 << 20, MaxRatio: 200}

// ratioFloor keeps the ratio check away from tiny entries, where a run of zeros legitimately
// compresses by more than any sane ratio and the absolute size is harmless anyway.
const ratioFloor = 1 << 20

// Entry is one file or directory of an input, in input order.
type Entry struct {
	Name   string // slash-separated path inside the archive or directory
	Source string // the input (jar or directory) it comes from, for messages
	Header zip.FileHeader

	zf   *zip.File // set for jar inputs
	path string    // set for directory inputs: the file on disk
}

// IsDir reports whether the entry is a directory entry ("a/b/").
func (e *Entry) IsDir() bool { return strings.HasSuffix(e.Name, "/") }

// String names the entry the way error messages do: "lib.jar!a/B.class", or the file alone
// for a class file given as an input (its own source).
func (e *Entry) String() string {
	if e.path != "" && e.path == e.Source {
		return e.Source
	}
	return e.Source + "!" + e.Name
}

// LimitError is an entry refused by Limits: one larger than MaxEntrySize, declared or read, or
// one whose declared size is over MaxRatio times its compressed size (a zip bomb's mark).
type LimitError struct {
	Entry      string // "lib.jar!a/B.class"
	Size       int64  // declared (or, past the declaration, read) uncompressed size
	Compressed int64  // compressed size, for a ratio refusal
	Limit      int64  // the limit passed: Limits.MaxEntrySize, or Limits.MaxRatio when Ratio
	Ratio      bool
	Read       bool // the size was read past the declared one (a directory input's file grew)
}

func (e *LimitError) Error() string {
	switch {
	case e.Ratio:
		return fmt.Sprintf("%s: declared size %d bytes from %d compressed is a ratio over %d, typical of a zip bomb", e.Entry, e.Size, e.Compressed, e.Limit)
	case e.Read:
		return fmt.Sprintf("%s: larger than the limit of %d bytes", e.Entry, e.Limit)
	}
	return fmt.Sprintf("%s: declared size %d bytes exceeds the limit of %d", e.Entry, e.Size, e.Limit)
}

// check refuses to inflate an entry whose declared size would exceed lim. archive/zip fails a
// read that produces more bytes than declared, so the declared size bounds what is read.
func (e *Entry) check(lim Limits) error {
	size := int64(e.Header.UncompressedSize64)
	if e.Header.UncompressedSize64 > 1<<62 || (lim.MaxEntrySize > 0 && size > lim.MaxEntrySize) {
		return &LimitError{Entry: e.String(), Size: int64(e.Header.UncompressedSize64), Limit: lim.MaxEntrySize}
	}
	if e.zf != nil && lim.MaxRatio > 0 && size > ratioFloor {
		comp := int64(e.Header.CompressedSize64)
		if comp <= 0 || size/comp > lim.MaxRatio {
			return &LimitError{Entry: e.String(), Size: size, Compressed: comp, Limit: lim.MaxRatio, Ratio: true}
		}
	}
	return nil
}

// Open returns the entry's uncompressed contents as a stream, after checking lim.
func (e *Entry) Open(lim Limits) (io.ReadCloser, error) {
	if err := e.check(lim); err != nil {
		return nil, err
	}
	if e.zf != nil {
		rc, err := e.zf.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e, err)
		}
		return rc, nil
	}
	f, err := os.Open(e.path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// ReadAll returns the entry's uncompressed contents, after checking lim.
func (e *Entry) ReadAll(lim Limits) ([]byte, error) {
	rc, err := e.Open(lim)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	// The declared size is only a hint for a directory input (the file may change under us), so
	// the read is bounded by the limit too.
	n := int64(e.Header.UncompressedSize64)
	buf := bytes.NewBuffer(make([]byte, 0, n+bytes.MinRead))
	max := lim.MaxEntrySize
	if max <= 0 {
		max = 1 << 62
	}
	if _, err := io.Copy(buf, io.LimitReader(rc, max+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", e, err)
	}
	if int64(buf.Len()) > max {
		return nil, &LimitError{Entry: e.String(), Size: int64(buf.Len()), Limit: max, Read: true}
	}
	return buf.Bytes(), nil
}

// Input is one opened jar or class directory.
type Input struct {
	Path    string
	Entries []*Entry
	Comment string // the zip archive comment, empty for directories
	IsDir   bool
	closer  io.Closer
}

// Close releases the jar file.
func (in *Input) Close() error {
	if in.closer != nil {
		return in.closer.Close()
	}
	return nil
}

// OpenInput opens a jar (any zip archive), a directory of classes or a class file. Its entries
// keep the order of the zip central directory; a directory is walked in lexical order with
// META-INF/ and its manifest first, as the jar tool writes them. A class file is one entry named
// by the class ("com/acme/A.class"), as in a jar, whatever the file is called. A zip holding the
// same name twice is refused: the JDK and other tools disagree about which copy counts, so no
// choice would be safe.
func OpenInput(path string) (*Input, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return openDir(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var magic [4]byte
	if n, _ := f.ReadAt(magic[:], 0); n == 4 && string(magic[:]) == "\xca\xfe\xba\xbe" {
		f.Close()
		return openClass(path, st)
	}
	in, err := openZip(path, f, st.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	in.closer = f
	return in, nil
}

func openZip(path string, r io.ReaderAt, size int64) (*Input, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		if errors.Is(err, zip.ErrFormat) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: not a jar or zip file, or truncated (%w); inputs are jars, class directories or class files", path, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	useInflater(zr)
	in := &Input{Path: path, Comment: zr.Comment}
	seen := make(map[string]bool, len(zr.File))
	for _, zf := range zr.File {
		if seen[zf.Name] {
			return nil, fmt.Errorf("%s!%s: the entry occurs more than once in the archive", path, zf.Name)
		}
		seen[zf.Name] = true
		if zf.Name == "" {
			return nil, fmt.Errorf("%s: an entry has an empty name", path)
		}
		in.Entries = append(in.Entries, &Entry{Name: zf.Name, Source: path, Header: zf.FileHeader, zf: zf})
	}
	return in, nil
}

// openClass opens a class file as an input of one entry, named by the class's internal name.
func openClass(path string, st os.FileInfo) (*Input, error) {
	h := zip.FileHeader{Method: zip.Deflate, Modified: st.ModTime(), UncompressedSize64: uint64(st.Size())}
	h.SetMode(st.Mode())
	e := &Entry{Source: path, Header: h, path: path}
	data, err := e.ReadAll(DefaultLimits)
	if err != nil {
		return nil, err
	}
	name, err := classfile.ReadName(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a class file that names its class: %w", path, err)
	}
	e.Name = name + ".class"
	e.Header.Name = e.Name
	return &Input{Path: path, Entries: []*Entry{e}}, nil
}

func openDir(root string) (*Input, error) {
	in := &Input{Path: root, IsDir: true}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			// A link to a file (build tools link shared resources) is archived as that file; a
			// link to a directory is not followed, so a link cycle cannot make the walk endless.
			if target, err := os.Stat(p); err == nil && target.Mode().IsRegular() {
				info = target
			}
		}
		switch {
		case d.IsDir():
			name += "/"
		case !info.Mode().IsRegular():
			// Sockets, devices and links to who-knows-where have no place in a jar; say so rather
			// than archive something the user did not mean.
			return fmt.Errorf("%s: not a regular file or directory", p)
		}
		h := zip.FileHeader{Name: name, Method: zip.Deflate, Modified: info.ModTime()}
		if d.IsDir() {
			h.Method = zip.Store
		} else {
			h.UncompressedSize64 = uint64(info.Size())
		}
		h.SetMode(info.Mode())
		in.Entries = append(in.Entries, &Entry{Name: name, Source: root, Header: h, path: p})
		return nil
	})
	if err != nil {
		return nil, err
	}
	// WalkDir is lexical, which puts "META-INF/" after upper-case package names; the manifest
	// must come first for JarInputStream to see it.
	rank := func(e *Entry) int {
		switch e.Name {
		case "META-INF/":
			return 0
		case manifestName:
			return 1
		}
		return 2
	}
	sort.SliceStable(in.Entries, func(i, j int) bool { return rank(in.Entries[i]) < rank(in.Entries[j]) })
	return in, nil
}

// unsafePath says why name cannot be written below a directory, or "" when it can.
func unsafePath(name string) string {
	if strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || (len(name) >= 2 && name[1] == ':') {
		return "absolute or non-portable path"
	}
	for _, part := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		switch part {
		case "..":
			return "path leaves the output directory (..)"
		case "", ".":
			return "empty or '.' path element"
		}
	}
	if strings.ContainsRune(name, 0) {
		return "NUL in name"
	}
	return ""
}
