package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// pdfVolatile matches what FOP writes differently on every run: the creation and modification
// dates (info dictionary and XMP), the document ID, and — because those can change length —
// the cross-reference offsets that follow them.
var pdfVolatile = []*regexp.Regexp{
	regexp.MustCompile(`/(CreationDate|ModDate)\s*\([^)]*\)`),
	regexp.MustCompile(`/ID\s*\[\s*<[0-9A-Fa-f]*>\s*<[0-9A-Fa-f]*>\s*\]`),
	regexp.MustCompile(`<(xmp:[A-Za-z]*Date|dc:date)>[^<]*<`),
	regexp.MustCompile(`(?s)\nxref\n.*?\ntrailer`),
	regexp.MustCompile(`startxref\s*\d+`),
	regexp.MustCompile(`/Length \d+`),
}

// stripPDFVolatile blanks the fields of a PDF that legitimately differ between two renderings
// of the same document, leaving page content, fonts and structure to be compared.
func stripPDFVolatile(b []byte) []byte {
	for _, re := range pdfVolatile {
		b = re.ReplaceAll(b, []byte("<volatile>"))
	}
	return b
}

var pdfPage = regexp.MustCompile(`/Type\s*/Page[^s]`)

func countPDFPages(b []byte) int { return len(pdfPage.FindAll(b, -1)) }

// pngPixelDigests decodes every PNG under dir and hashes its pixels (not the file bytes, which
// carry encoder choices), one "name WxH sha256" line per image, sorted by name.
func pngPixelDigests(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".png") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", e.Name(), err)
		}
		lines = append(lines, fmt.Sprintf("%s %s", e.Name(), pixelDigest(img)))
	}
	sort.Strings(lines)
	return lines, nil
}

func pixelDigest(img image.Image) string {
	r := img.Bounds()
	h := sha256.New()
	var px [16]byte
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, ca := img.At(x, y).RGBA()
			binary.BigEndian.PutUint32(px[0:], cr)
			binary.BigEndian.PutUint32(px[4:], cg)
			binary.BigEndian.PutUint32(px[8:], cb)
			binary.BigEndian.PutUint32(px[12:], ca)
			h.Write(px[:])
		}
	}
	return fmt.Sprintf("%dx%d %s", r.Dx(), r.Dy(), hex.EncodeToString(h.Sum(nil)))
}

// firstDifference describes where two canonical outputs part, for the failure message.
func firstDifference(want, got Output) string {
	n := len(want.Lines)
	if len(got.Lines) < n {
		n = len(got.Lines)
	}
	for i := 0; i < n; i++ {
		if want.Lines[i] != got.Lines[i] {
			return fmt.Sprintf("line %d:\n  plain: %s\n  this:  %s", i+1, clip(want.Lines[i]), clip(got.Lines[i]))
		}
	}
	if len(want.Lines) != len(got.Lines) {
		return fmt.Sprintf("plain has %d lines, this run %d; first extra: %s", len(want.Lines), len(got.Lines),
			clip(extraLine(want.Lines, got.Lines)))
	}
	return "no difference"
}

func extraLine(a, b []string) string {
	if len(a) > len(b) {
		return a[len(b)]
	}
	return b[len(a)]
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
