package jar

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"os"
)

// Fingerprint returns a digest of the classes of inputs, in input order: their names, sizes and
// contents (a jar's CRC-32s from its central directory, so nothing is inflated; a directory's
// class files are read). The same inputs give the same digest on any machine, whatever their
// file times; different inputs almost never do. The count pass places a fresh table's site IDs
// by it (accounts.Table.Place).
func Fingerprint(inputs []string) ([]byte, error) {
	h := sha256.New()
	var buf []byte
	for _, p := range inputs {
		in, err := OpenInput(p)
		if err != nil {
			return nil, err
		}
		for _, e := range in.Entries {
			if !IsClass(e.Name) {
				continue
			}
			sum, size := e.Header.CRC32, e.Header.UncompressedSize64
			if e.zf == nil {
				data, err := os.ReadFile(e.path)
				if err != nil {
					in.Close()
					return nil, err
				}
				sum, size = crc32.ChecksumIEEE(data), uint64(len(data))
			}
			buf = binary.BigEndian.AppendUint32(buf[:0], uint32(len(e.Name)))
			buf = append(buf, e.Name...)
			buf = binary.BigEndian.AppendUint64(buf, size)
			buf = binary.BigEndian.AppendUint32(buf, sum)
			h.Write(buf)
		}
		in.Close()
	}
	return h.Sum(nil), nil
}
