package classfile

import (
	"bytes"
	"testing"
)

func TestModifiedUTF8(t *testing.T) {
	cases := []struct {
		s   string
		enc []byte
	}{
		{"abc", []byte("abc")},
		{"a\x00b", []byte{'a', 0xC0, 0x80, 'b'}},
		{"é", []byte{0xC3, 0xA9}},
		{"€", []byte{0xE2, 0x82, 0xAC}},
		// Outside the BMP: a surrogate pair, three bytes per half, never 4-byte UTF-8.
		{"😀", []byte{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}},
	}
	for _, c := range cases {
		if got := EncodeModifiedUTF8(c.s); !bytes.Equal(got, c.enc) {
			t.Errorf("encode %q: % x, want % x", c.s, got, c.enc)
		}
		if got, err := DecodeModifiedUTF8(c.enc); err != nil || got != c.s {
			t.Errorf("decode % x: %q %v", c.enc, got, err)
		}
	}
	for _, bad := range [][]byte{{0}, {0x80}, {0xC3}, {0xE2, 0x82}, {0xF0, 0x9F, 0x98, 0x80}} {
		if _, err := DecodeModifiedUTF8(bad); err == nil {
			t.Errorf("% x accepted", bad)
		}
	}
}
