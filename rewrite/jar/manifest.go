package jar

import (
	"bytes"
	"strings"
)

const manifestName = "META-INF/MANIFEST.MF"

// isSignatureFile reports whether name is part of a jar signature: the signature file (.SF) or a
// signature block (.RSA, .DSA, .EC, SIG-*) directly in META-INF/, as the JDK's jar verifier
// recognises them. Once a class changes, the JDK refuses a jar whose signature no longer matches,
// so these must go.
func isSignatureFile(name string) bool {
	if !strings.HasPrefix(name, "META-INF/") {
		return false
	}
	base := strings.ToUpper(name[len("META-INF/"):])
	if base == "" || strings.Contains(base, "/") {
		return false
	}
	for _, ext := range []string{".SF", ".RSA", ".DSA", ".EC"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return strings.HasPrefix(base, "SIG-")
}

// manifestAttr is one attribute of a manifest: its name and its raw lines, continuation lines and
// line terminators included, so that untouched attributes are written back byte for byte.
type manifestAttr struct {
	name, value string
	raw         []byte
}

// parseSection splits one manifest section (no blank separator line) into attributes.
func parseSection(sec []byte) []manifestAttr {
	var attrs []manifestAttr
	for _, line := range splitLines(sec) {
		text := strings.TrimRight(string(line), "\r\n")
		if strings.HasPrefix(text, " ") && len(attrs) > 0 {
			a := &attrs[len(attrs)-1]
			a.raw = append(a.raw, line...)
			a.value += text[1:]
			continue
		}
		name, value, _ := strings.Cut(text, ":")
		attrs = append(attrs, manifestAttr{name: name, value: strings.TrimPrefix(value, " "), raw: append([]byte(nil), line...)})
	}
	return attrs
}

// splitLines cuts b after each CRLF, LF or lone CR (all three end a manifest line).
func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			lines = append(lines, b)
			break
		}
		end := i + 1
		if b[i] == '\r' && end < len(b) && b[end] == '\n' {
			end++
		}
		lines = append(lines, b[:end])
		b = b[end:]
	}
	return lines
}

// stripDigests removes the per-entry digest attributes (SHA-256-Digest, …) that name an entry
// for which changed is true, since those digests are wrong after the rewrite and would mislead
// jarsigner -verify and anyone re-signing the jar. A section left with nothing but its Name is
// dropped. The main section, all other sections and all other attributes are kept byte for
// byte. It returns the new manifest and how many sections it edited.
func stripDigests(mf []byte, changed func(entry string) bool) ([]byte, int) {
	var out bytes.Buffer
	edited := 0
	lines := splitLines(mf)
	for i := 0; i < len(lines); {
		// A section runs up to (not including) the next empty line; the empty lines follow it.
		j := i
		for j < len(lines) && !isBlank(lines[j]) {
			j++
		}
		k := j
		for k < len(lines) && isBlank(lines[k]) {
			k++
		}
		sec, sep := bytes.Join(lines[i:j], nil), bytes.Join(lines[j:k], nil)
		i = k
		attrs := parseSection(sec)
		if len(attrs) == 0 || !strings.EqualFold(attrs[0].name, "Name") || !changed(attrs[0].value) {
			out.Write(sec)
			out.Write(sep)
			continue
		}
		var kept []manifestAttr
		for _, a := range attrs {
			if !strings.HasSuffix(strings.ToLower(a.name), "-digest") {
				kept = append(kept, a)
			}
		}
		if len(kept) == len(attrs) {
			out.Write(sec)
			out.Write(sep)
			continue
		}
		edited++
		if len(kept) == 1 {
			continue // only "Name:" is left: the section says nothing any more
		}
		for _, a := range kept {
			out.Write(a.raw)
		}
		out.Write(sep)
	}
	return out.Bytes(), edited
}

func isBlank(line []byte) bool { return len(bytes.TrimRight(line, "\r\n")) == 0 }
