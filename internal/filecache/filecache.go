// Package filecache is a directory of small values under 32-byte keys, shared by any number of
// processes: each entry is one file, written under a temporary name and renamed into place, so
// a reader sees a whole entry or none; each carries a checksum, so an entry a crash or a disk
// cut short is never used (it is removed, and the next Put replaces it); and the directory is
// kept under a size bound by removing the entries used least recently.
//
// Layout: DIR/KK/KEYHEX, KK the key's first byte in hex (256 subdirectories keep each small).
// An entry file is "HLC2", the CRC-32 (IEEE) of key and value, big-endian, then the value.
//
// The checksum guards against damage, as a zip's CRC-32 guards each of its entries (and the JVM
// trusts a jar's classes on no more): what an entry is the value of is the caller's to decide,
// by its key and, where keys may collide, by what the value holds. A CRC-32 is what a JVM can
// check before its JIT has compiled anything: java.util.zip.CRC32 is an intrinsic of the
// interpreter, a SHA-256 is not, and the agent checks every entry it reads as classes load.
package filecache

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// Key names an entry; callers hash what decides the value into it.
type Key [32]byte

var magic = []byte("HLC2")

// An entry's header: the magic, then the checksum.
const (
	checksumAt = 4
	headerSize = checksumAt + 4
)

// touchAfter: a hit renews an entry's modification time (its age for Trim) only when it is
// older than this, so a run that hits thousands of entries does not write thousands of inodes.
const touchAfter = time.Hour

// staleTemp is how old a temporary must be before Trim takes it for the leftover of a killed
// writer; a live writer finishes an entry in milliseconds.
const staleTemp = time.Hour

// tempPrefix starts the names of entries being written.
const tempPrefix = ".tmp-"

// Cache is an open cache directory. It is safe for concurrent use.
type Cache struct {
	dir     string
	max     int64
	written atomic.Int64 // bytes Put by this process, so Trim can be skipped when nothing grew
}

// Open makes dir (and its parents) if needed. maxBytes bounds the directory's size after Trim.
func Open(dir string, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("cache %s: size bound %d: must be positive", dir, maxBytes)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return &Cache{dir: dir, max: maxBytes}, nil
}

// Dir returns the cache directory.
func (c *Cache) Dir() string { return c.dir }

// Written returns the bytes this process has stored.
func (c *Cache) Written() int64 { return c.written.Load() }

func (c *Cache) path(k Key) string {
	h := hex.EncodeToString(k[:])
	return filepath.Join(c.dir, h[:2], h)
}

// checksum is the header's checksum field for an entry.
func checksum(k Key, value []byte) [4]byte {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.Update(crc32.ChecksumIEEE(k[:]), crc32.IEEETable, value))
	return sum
}

// Get returns the value stored under k. A missing entry is a miss; so is one whose checksum
// does not match, which is removed so that the next Put can store a good one. The key is part
// of the checksum, so an entry renamed or copied under another key does not match either.
func (c *Cache) Get(k Key) ([]byte, bool) {
	p := c.path(k)
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < headerSize {
		c.discard(p, st)
		return nil, false
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, false
	}
	sum := checksum(k, data[headerSize:])
	if !bytes.Equal(data[:checksumAt], magic) || !bytes.Equal(data[checksumAt:headerSize], sum[:]) {
		c.discard(p, st)
		return nil, false
	}
	if now := time.Now(); now.Sub(st.ModTime()) > touchAfter {
		os.Chtimes(p, now, now) // best effort: a failure only ages the entry
	}
	return data[headerSize:], true
}

// discard removes a bad entry, unless another process replaced it since it was read (then
// the file at the path is no longer the one that was bad).
func (c *Cache) discard(p string, bad fs.FileInfo) {
	if bad == nil {
		return
	}
	if now, err := os.Stat(p); err == nil && os.SameFile(now, bad) {
		os.Remove(p)
	}
}

// Put stores value under k, replacing any entry there. Concurrent Puts of one key each write a
// whole entry; the last rename wins, and a reader sees one of them complete.
func (c *Cache) Put(k Key, value []byte) error {
	p := c.path(k)
	dir := filepath.Dir(p)
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o777); err == nil {
			f, err = os.CreateTemp(dir, tempPrefix+"*")
		}
	}
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	sum := checksum(k, value)
	buf := make([]byte, 0, headerSize+len(value))
	buf = append(append(append(buf, magic...), sum[:]...), value...)
	_, err = f.Write(buf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("cache: %w", err)
	}
	c.written.Add(int64(len(buf)))
	return nil
}

// Trim removes the entries used least recently until the directory holds at most 90% of its
// bound (the margin spares the next runs a Trim each), and temporaries older than an hour,
// which killed writers left. It returns the number of entries removed. Entries another
// process removes meanwhile are no error.
func (c *Cache) Trim() (int, error) {
	type entry struct {
		path string
		size int64
		mod  time.Time
	}
	var entries []entry
	var total int64
	now := time.Now()
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed since the directory was read
		}
		if strings.HasPrefix(d.Name(), tempPrefix) {
			if now.Sub(info.ModTime()) > staleTemp {
				os.Remove(p)
			}
			return nil
		}
		entries = append(entries, entry{p, info.Size(), info.ModTime()})
		total += info.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("cache: %w", err)
	}
	if total <= c.max {
		return 0, nil
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].mod.Before(entries[j].mod) })
	removed := 0
	for _, e := range entries {
		if total <= c.max/10*9 {
			break
		}
		if err := os.Remove(e.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= e.size
			removed++
		}
	}
	return removed, nil
}
