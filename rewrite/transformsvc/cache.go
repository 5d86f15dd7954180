package transformsvc

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/heapledger/heapledger/internal/filecache"
	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// cacheFormat starts every key: a change to the entry encoding below changes it, so entries of
// an older encoding are never read as this one's.
const cacheFormat = "heapledger transform cache 2\n"

// A cached class is what the pass made of the class, with its site IDs made relative: the
// class it was made from (its name and bytes, which a key does not prove: see cacheKey), the
// rewritten bytes, the number of IDs the pass reserved for it, and per site it named, where in
// the bytes its ID lies and what the site is. Replayed in another run, the class reserves as
// many IDs of that run's table, names its sites with them and gets them written into its
// bytes: exactly what rewriting it there would give, since nothing else in a rewrite depends
// on the table's state (the salt covers what does: options, accounts, the binary).
//
// Encoding: u8 changed | str name | u32 length, original class bytes | u32 reserved | u32 sites, each u32 offset of the ID's four bytes,
// str kind, str type, str method, i32 offset, i32 line | u32 skips, each str method, str
// reason | u32 warnings, each str | u32 length, class bytes. str is u32 length and UTF-8.
type cachedClass struct {
	changed  bool
	name     string
	original []byte
	reserved int
	sites    []cachedSite
	skipped  []transform.Skip
	warnings []string
	data     []byte
}

type cachedSite struct {
	at   int // offset in data of the big-endian int32 that holds the site's ID
	site accounts.Site
}

// A key locates a class's entry. The agent computes one per class as the class loads, before
// its JIT has compiled anything, so a key is made of CRC-32s (java.util.zip.CRC32 is an
// intrinsic of the interpreter, a SHA-256 is not: docs/benchmarks-startup.md, "Fifth run")
// and of the salt's ID, hashed once per run. Two classes may share such a key; the entry
// holds the class it was made from, and only an entry whose name and bytes equal the class's
// is replayed (matches). The class's checksum comes first, so that entries spread over the
// cache's 256 subdirectories.
const (
	keyClassCRC = 0  // u32: CRC-32 (IEEE) of the class bytes
	keyClassLen = 4  // u32: the class's length
	keyNameCRC  = 8  // u32: CRC-32 of the name's UTF-8
	keySaltID   = 12 // saltIDSize bytes: the salt's ID
	saltIDSize  = len(filecache.Key{}) - keySaltID
)

// A saltID names what a rewrite depends on besides the class (the binary, the options, the
// hello's table lines, the class path): the first bytes of the SHA-256 of the cache format
// and the salt.
type saltID [saltIDSize]byte

func newSaltID(salt []byte) saltID {
	h := sha256.New()
	h.Write([]byte(cacheFormat))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(salt)))
	h.Write(n[:])
	h.Write(salt)
	var id saltID
	copy(id[:], h.Sum(nil))
	return id
}

// cacheKey is where the entry of the class rewritten under the salt id lies (LocalCache.key
// in the agent computes the same).
func cacheKey(id saltID, name string, class []byte) filecache.Key {
	var k filecache.Key
	binary.BigEndian.PutUint32(k[keyClassCRC:], crc32.ChecksumIEEE(class))
	binary.BigEndian.PutUint32(k[keyClassLen:], uint32(len(class)))
	binary.BigEndian.PutUint32(k[keyNameCRC:], crc32.ChecksumIEEE([]byte(name)))
	copy(k[keySaltID:], id[:])
	return k
}

// matches reports whether the entry was made from this class: its key says so only likely.
func (c *cachedClass) matches(name string, class []byte) bool {
	return c.name == name && bytes.Equal(c.original, class)
}

// newCachedClass turns a fresh result into an entry, finding each site's ID in the rewritten
// bytes by the pool index the pass reported. The sites are named in table by then.
func newCachedClass(name string, original []byte, res transform.Result, table *accounts.Table) (*cachedClass, error) {
	c := &cachedClass{changed: res.Changed(), name: name, original: original, skipped: res.Skipped, warnings: res.Warnings, data: res.Data}
	if res.IDs == nil {
		return c, nil
	}
	c.reserved = res.IDs.Reserved
	if len(res.IDs.Pool) == 0 {
		return c, nil
	}
	offs, err := classfile.ConstantOffsets(res.Data)
	if err != nil {
		return nil, err
	}
	for i, pi := range res.IDs.Pool {
		id := res.IDs.First + i
		site, ok := table.Site(id)
		if int(pi) >= len(offs) || offs[pi] == 0 || !ok {
			return nil, fmt.Errorf("site %d: pool constant %d or its name is missing", id, pi)
		}
		at := offs[pi] + 1
		if res.Data[offs[pi]] != classfile.TagInteger || int32(binary.BigEndian.Uint32(res.Data[at:])) != int32(id) {
			return nil, fmt.Errorf("site %d: pool constant %d does not hold its ID", id, pi)
		}
		c.sites = append(c.sites, cachedSite{at: at, site: site})
	}
	return c, nil
}

// replay gives the class the IDs of table, as the pass would have, and returns the result
// the pass would have returned. The entry was checked when decoded.
func (c *cachedClass) replay(table *accounts.Table) (transform.Result, error) {
	res := transform.Result{Skipped: c.skipped, Warnings: c.warnings}
	first, err := table.Reserve(c.reserved)
	if err != nil {
		return res, err
	}
	res.IDs = &transform.IDs{First: first, Reserved: c.reserved}
	if c.changed {
		res.Data = append([]byte(nil), c.data...)
	}
	for i, s := range c.sites {
		binary.BigEndian.PutUint32(res.Data[s.at:], uint32(int32(first+i)))
		table.Name(first+i, s.site)
	}
	return res, nil
}

func (c *cachedClass) encode() []byte {
	b := []byte{0}
	if c.changed {
		b[0] = 1
	}
	u32 := func(v int) { b = binary.BigEndian.AppendUint32(b, uint32(v)) }
	str := func(s string) { u32(len(s)); b = append(b, s...) }
	str(c.name)
	u32(len(c.original))
	b = append(b, c.original...)
	u32(c.reserved)
	u32(len(c.sites))
	for _, s := range c.sites {
		u32(s.at)
		str(s.site.Kind)
		str(s.site.Type)
		str(s.site.Method)
		u32(s.site.Offset)
		u32(s.site.Line)
	}
	u32(len(c.skipped))
	for _, s := range c.skipped {
		str(s.Method)
		str(string(s.Code))
		str(s.Detail)
	}
	u32(len(c.warnings))
	for _, w := range c.warnings {
		str(w)
	}
	u32(len(c.data))
	return append(b, c.data...)
}

// decodeCachedClass reads an entry and checks that replaying it cannot go wrong: a checksum
// guards against damage, this against an entry written by a bug.
func decodeCachedClass(b []byte) (*cachedClass, error) {
	d := decoder{b: b}
	c := &cachedClass{changed: d.u8() == 1}
	c.name = string(d.bytes(int(d.u32())))
	c.original = d.bytes(int(d.u32()))
	c.reserved = int(d.u32())
	count := func() int {
		n := d.u32()
		if int64(n) > int64(len(d.b)-d.off) { // every item takes at least a byte
			d.need(int(min(n, math.MaxInt32)))
			return 0
		}
		return int(n)
	}
	str := func() string { return string(d.bytes(int(d.u32()))) }
	for n := count(); n > 0 && d.err == nil; n-- {
		s := cachedSite{at: int(d.u32())}
		s.site = accounts.Site{Kind: str(), Type: str(), Method: str(), Offset: int(int32(d.u32())), Line: int(int32(d.u32()))}
		c.sites = append(c.sites, s)
	}
	for n := count(); n > 0 && d.err == nil; n-- {
		c.skipped = append(c.skipped, transform.Skip{Method: str(), Code: transform.SkipCode(str()), Detail: str()})
	}
	for n := count(); n > 0 && d.err == nil; n-- {
		c.warnings = append(c.warnings, str())
	}
	c.data = d.bytes(int(d.u32()))
	if d.err != nil {
		return nil, d.err
	}
	if d.off != len(d.b) {
		return nil, fmt.Errorf("%d bytes after the class", len(d.b)-d.off)
	}
	if len(c.sites) > c.reserved || (!c.changed && len(c.sites) > 0) {
		return nil, errors.New("more sites than IDs reserved, or sites in an unchanged class")
	}
	for _, s := range c.sites {
		if s.at < 1 || s.at+4 > len(c.data) || c.data[s.at-1] != classfile.TagInteger {
			return nil, fmt.Errorf("site ID at offset %d is not an integer constant of the class", s.at)
		}
	}
	return c, nil
}
