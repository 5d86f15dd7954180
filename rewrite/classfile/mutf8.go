package classfile

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// DecodeModifiedUTF8 decodes the modified UTF-8 of CONSTANT_Utf8 (JVMS 4.4.7): NUL is two
// bytes, and characters outside the BMP are surrogate pairs of three bytes each.
func DecodeModifiedUTF8(b []byte) (string, error) {
	ascii := true
	for _, c := range b {
		if c == 0 || c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b), nil
	}
	var sb strings.Builder
	var units []uint16
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c != 0 && c < 0x80:
			units = append(units, uint16(c))
			i++
		case c&0xE0 == 0xC0 && i+1 < len(b) && b[i+1]&0xC0 == 0x80:
			units = append(units, uint16(c&0x1F)<<6|uint16(b[i+1]&0x3F))
			i += 2
		case c&0xF0 == 0xE0 && i+2 < len(b) && b[i+1]&0xC0 == 0x80 && b[i+2]&0xC0 == 0x80:
			units = append(units, uint16(c&0x0F)<<12|uint16(b[i+1]&0x3F)<<6|uint16(b[i+2]&0x3F))
			i += 3
		default:
			return "", fmt.Errorf("invalid modified UTF-8 byte 0x%02x at offset %d", c, i)
		}
	}
	for _, r := range utf16.Decode(units) {
		sb.WriteRune(r)
	}
	return sb.String(), nil
}

// EncodeModifiedUTF8 is the inverse of DecodeModifiedUTF8.
func EncodeModifiedUTF8(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r != 0 && r < 0x80:
			out = append(out, byte(r))
		case r < 0x800:
			out = append(out, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
		case r < 0x10000:
			out = append(out, 0xE0|byte(r>>12), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
		default:
			hi, lo := utf16.EncodeRune(r)
			for _, u := range []rune{hi, lo} {
				out = append(out, 0xE0|byte(u>>12), 0x80|byte(u>>6&0x3F), 0x80|byte(u&0x3F))
			}
		}
	}
	return out
}
