package jar

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// The zip records readManifest reads, with the offsets of the fields it uses (APPNOTE.TXT
// 4.3.7, 4.3.12 and 4.3.16).
const (
	eocdSig        = 0x06054b50
	eocdLen        = 22
	eocdEntries    = 10 // u16: entries in the central directory
	eocdDirSize    = 12 // u32
	eocdDirOffset  = 16 // u32
	eocdCommentLen = 20 // u16

	dirSig        = 0x02014b50
	dirLen        = 46
	dirMethod     = 10 // u16
	dirCompSize   = 20 // u32
	dirSize       = 24 // u32
	dirNameLen    = 28 // u16
	dirExtraLen   = 30 // u16
	dirCommentLen = 32 // u16
	dirLocal      = 42 // u32: offset of the local header

	localSig      = 0x04034b50
	localLen      = 30
	localNameLen  = 26 // u16
	localExtraLen = 28 // u16

	maxManifest = 1 << 20 // a larger manifest is an error: its jar ends the class path (NewClassPath)
)

// errSlowPath says that readManifest leaves the archive to archive/zip (OpenInput): a zip64
// archive, data before the archive, or anything it does not expect.
var errSlowPath = errors.New("not a plain zip archive")

// errClassFile says that a class path entry is a class file, which the JDK's loader cannot
// open as a jar and skips (OpenInput would read it as a class).
var errClassFile = errors.New("a class file, not a jar")

// A jarHead is what a class path needs of a jar before reading its entries: its manifest (nil
// when it has none), a digest of its central directory (every entry's name, sizes and CRC-32,
// so it names the contents), and the file's size and modification time when it was read.
type jarHead struct {
	manifest []byte
	dirSum   [sha256.Size]byte
	size     int64
	mod      int64
}

// readManifest returns the jar's META-INF/MANIFEST.MF, or nil when it has none.
func readManifest(path string) ([]byte, error) {
	h, err := readHead(path)
	return h.manifest, err
}

// readHead reads the jar's head from one open file, through the central directory's bytes
// without building an entry for each file: a class path's jars are read before the service's
// hello, and some hold tens of thousands of entries. An archive it does not expect is read by
// OpenInput instead.
func readHead(path string) (jarHead, error) {
	var h jarHead
	f, err := os.Open(path)
	if err != nil {
		return h, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return h, err
	}
	h.size, h.mod = st.Size(), st.ModTime().UnixNano()
	h.manifest, h.dirSum, err = manifestFast(f, st.Size())
	if !errors.Is(err, errSlowPath) {
		return h, err
	}
	var magic [4]byte
	if n, _ := f.ReadAt(magic[:], 0); n == 4 && string(magic[:]) == "\xca\xfe\xba\xbe" {
		return h, errClassFile
	}
	in, err := OpenInput(path)
	if err != nil {
		return h, err
	}
	defer in.Close()
	d := sha256.New()
	var exact, other *Entry
	for _, e := range in.Entries {
		fmt.Fprintf(d, "%q %d %d %08x\n", e.Name, e.Header.CompressedSize64, e.Header.UncompressedSize64, e.Header.CRC32)
		if e.Name == manifestName && exact == nil {
			exact = e
		} else if other == nil && strings.EqualFold(e.Name, manifestName) {
			other = e // the JDK's JarFile falls back to such a name
		}
	}
	d.Sum(h.dirSum[:0])
	if exact == nil {
		exact = other
	}
	h.manifest = nil
	if exact != nil {
		h.manifest, err = exact.ReadAll(Limits{MaxEntrySize: maxManifest, MaxRatio: DefaultLimits.MaxRatio})
	}
	return h, err
}

// manifestFast finds the manifest through the end record and the central directory, and
// returns the directory's digest.
func manifestFast(r io.ReaderAt, size int64) ([]byte, [sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	tail := int64(eocdLen + 0xFFFF)
	if tail > size {
		tail = size
	}
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil {
		return nil, sum, err
	}
	at := -1
	for i := len(buf) - eocdLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == eocdSig && i+eocdLen+int(binary.LittleEndian.Uint16(buf[i+eocdCommentLen:])) == len(buf) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil, sum, errSlowPath
	}
	end := buf[at:]
	n := int(binary.LittleEndian.Uint16(end[eocdEntries:]))
	dsize, doff := int64(binary.LittleEndian.Uint32(end[eocdDirSize:])), int64(binary.LittleEndian.Uint32(end[eocdDirOffset:]))
	if n == 0xFFFF || dsize == 0xFFFFFFFF || doff == 0xFFFFFFFF || doff+dsize != size-tail+int64(at) {
		return nil, sum, errSlowPath // zip64, or bytes before the archive
	}
	dir := make([]byte, dsize)
	if _, err := r.ReadAt(dir, doff); err != nil {
		return nil, sum, err
	}
	sum = sha256.Sum256(dir)
	var other []byte // the first record whose name is the manifest's in another case
	for i := 0; i < n; i++ {
		if len(dir) < dirLen || binary.LittleEndian.Uint32(dir) != dirSig {
			return nil, sum, errSlowPath
		}
		nl, el, cl := int(binary.LittleEndian.Uint16(dir[dirNameLen:])), int(binary.LittleEndian.Uint16(dir[dirExtraLen:])), int(binary.LittleEndian.Uint16(dir[dirCommentLen:]))
		if len(dir) < dirLen+nl+el+cl {
			return nil, sum, errSlowPath
		}
		if name := string(dir[dirLen : dirLen+nl]); name == manifestName {
			mf, err := readStored(r, dir)
			return mf, sum, err
		} else if other == nil && strings.EqualFold(name, manifestName) {
			other = dir
		}
		dir = dir[dirLen+nl+el+cl:]
	}
	if other != nil { // the JDK's JarFile falls back to such a name
		mf, err := readStored(r, other)
		return mf, sum, err
	}
	return nil, sum, nil
}

// readStored reads the entry whose central directory record starts rec.
func readStored(r io.ReaderAt, rec []byte) ([]byte, error) {
	method := binary.LittleEndian.Uint16(rec[dirMethod:])
	csize, usize := int64(binary.LittleEndian.Uint32(rec[dirCompSize:])), int64(binary.LittleEndian.Uint32(rec[dirSize:]))
	local := int64(binary.LittleEndian.Uint32(rec[dirLocal:]))
	if usize > maxManifest || csize > maxManifest || method != zipStore && method != zipDeflate {
		return nil, errSlowPath
	}
	var h [localLen]byte
	if _, err := r.ReadAt(h[:], local); err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint32(h[:]) != localSig {
		return nil, errSlowPath
	}
	start := local + localLen + int64(binary.LittleEndian.Uint16(h[localNameLen:])) + int64(binary.LittleEndian.Uint16(h[localExtraLen:]))
	comp := make([]byte, csize)
	if _, err := r.ReadAt(comp, start); err != nil {
		return nil, err
	}
	if method == zipStore {
		return comp, nil
	}
	out, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(comp)), maxManifest+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", manifestName, err)
	}
	if int64(len(out)) != usize {
		return nil, fmt.Errorf("%s: %d bytes inflated, the directory says %d", manifestName, len(out), usize)
	}
	return out, nil
}

// The compression methods readStored reads.
const (
	zipStore   = 0
	zipDeflate = 8
)
