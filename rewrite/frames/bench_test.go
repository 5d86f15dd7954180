package frames

import (
	"testing"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// BenchmarkEncodeFrames measures the frame work of an edit on every method of guava: attaching
// the compiler's frames and writing the table of the edited code (decoding and encoding the
// code itself is package code's and excluded by measuring it alone first).
func BenchmarkEncodeFrames(b *testing.B) {
	t := &testing.T{}
	type method struct {
		c  *classfile.Class
		cd *classfile.Code
		m  code.Method
	}
	var ms []method
	eachClass(t, "guava.jar", func(_ string, c *classfile.Class) {
		for _, m := range c.Methods {
			cd, _, err := c.MethodCode(m)
			if err != nil || cd == nil || classfile.FindAttribute(cd.Attributes, "StackMapTable", c.Pool) == nil {
				continue
			}
			ms = append(ms, method{c, cd, code.Method{Class: c.Name(), Name: m.Name(c.Pool), Desc: m.Descriptor(c.Pool), Access: m.AccessFlags, Major: c.Major}})
		}
	})
	if len(ms) == 0 {
		b.Skip("guava.jar not available")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, x := range ms {
			body, err := code.Decode(x.cd, x.c.Pool, x.m)
			if err != nil {
				b.Fatal(err)
			}
			fm, err := Attach(body)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := fm.EncodeFrames(body); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(ms)), "methods/op")
}
