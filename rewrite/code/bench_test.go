package code

import (
	"testing"
)

// loadMethods collects every method with code of a jar once, so the benchmark times only the
// code engine.
func loadMethods(b *testing.B, jar string) []*jarMethod {
	var ms []*jarMethod
	eachMethod(b, needJar(b, jar), func(jm *jarMethod) { ms = append(ms, jm) })
	return ms
}

// BenchmarkDecodeEncode is the hot path of the identity pass: decode and re-encode every
// method of guava. It reports methods per second on one core.
func BenchmarkDecodeEncode(b *testing.B) {
	ms := loadMethods(b, "guava.jar")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, jm := range ms {
			body, err := Decode(jm.code, jm.class.Pool, jm.info)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := body.Encode(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(ms))/b.Elapsed().Seconds(), "methods/s")
}

// BenchmarkEditEncode inserts a local store at entry and a load before every return of every
// guava method without a StackMapTable (so no frames are needed), and encodes with
// max_stack/max_locals recomputation: the cost of editing beyond the identity path.
func BenchmarkEditEncode(b *testing.B) {
	var ms []*jarMethod
	for _, jm := range loadMethods(b, "guava.jar") {
		body, err := Decode(jm.code, jm.class.Pool, jm.info)
		if err != nil {
			b.Fatal(err)
		}
		if !hasAttr(body, AttrStackMap) && !hasAttr(body, AttrRaw) {
			ms = append(ms, jm)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, jm := range ms {
			body, err := Decode(jm.code, jm.class.Pool, jm.info)
			if err != nil {
				b.Fatal(err)
			}
			v := body.NewLocal(1)
			body.InsertAfter(nil, body.Seq().Int(7).Store(ISTORE, v))
			for n := body.First(); n != nil; n = n.Next() {
				if n.Op >= IRETURN && n.Op <= RETURN {
					body.InsertBefore(n, body.Seq().Load(ILOAD, v).Op(POP))
				}
			}
			if _, err := body.Encode(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(ms))/b.Elapsed().Seconds(), "methods/s")
}

func hasAttr(b *Body, k AttrKind) bool {
	for _, a := range b.Attrs {
		if a.Kind == k {
			return true
		}
	}
	return false
}
