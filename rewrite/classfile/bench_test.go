package classfile

import "testing"

// The benchmarks run over every class of guava: the per-class cost the rewriter pays before and
// after any pass, for the bench/ comparison with ASM.

func guavaClasses(b *testing.B) ([]classEntry, int64) {
	classes := jarClasses(b, "guava.jar")
	var total int64
	for _, e := range classes {
		total += int64(len(e.data))
	}
	return classes, total
}

func report(b *testing.B, classes int) {
	b.ReportMetric(float64(classes*b.N)/b.Elapsed().Seconds(), "classes/s")
}

func BenchmarkParse(b *testing.B) {
	classes, total := guavaClasses(b)
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, e := range classes {
			if _, err := Parse(e.data); err != nil {
				b.Fatal(err)
			}
		}
	}
	report(b, len(classes))
}

func BenchmarkBytes(b *testing.B) {
	classes, total := guavaClasses(b)
	parsed := make([]*Class, len(classes))
	for i, e := range classes {
		c, err := Parse(e.data)
		if err != nil {
			b.Fatal(err)
		}
		parsed[i] = c
	}
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range parsed {
			if _, err := c.Bytes(); err != nil {
				b.Fatal(err)
			}
		}
	}
	report(b, len(classes))
}

// BenchmarkParseCode parses and re-encodes every Code attribute, as the identity pass does.
func BenchmarkParseCode(b *testing.B) {
	classes, total := guavaClasses(b)
	var attrs []*Attribute
	for _, e := range classes {
		c, err := Parse(e.data)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range c.Methods {
			if a := FindAttribute(m.Attributes, "Code", c.Pool); a != nil {
				attrs = append(attrs, a)
			}
		}
	}
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, a := range attrs {
			code, err := ParseCode(a)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := code.Encode(a.NameIndex); err != nil {
				b.Fatal(err)
			}
		}
	}
	report(b, len(classes))
}
