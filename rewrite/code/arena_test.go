package code

import (
	"fmt"
	"strings"
	"testing"
)

// TestReleaseLeavesNothingBehind edits every method of a real jar twice, once releasing each
// body as soon as it is encoded (so later methods reuse its nodes) and once not: both runs
// must encode the same bytes and fail the same way, method for method.
func TestReleaseLeavesNothingBehind(t *testing.T) {
	path := needJar(t, "commons-lang3.jar")
	edit := func(jm *jarMethod, k int, release bool) string {
		b, err := Decode(jm.code, jm.class.Pool, jm.info)
		if err != nil {
			return err.Error()
		}
		if release {
			defer b.Release()
		}
		// Enough inserted nodes now and then to take several chunks.
		s := nops(b, k%50)
		if k%7 == 0 {
			s = nops(b, 600)
		}
		b.InsertAfter(nil, s)
		out, err := b.Encode()
		if err != nil {
			return err.Error()
		}
		a, err := out.Encode(jm.raw.NameIndex)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%x", a.Data)
	}
	var plain []string
	k := 0
	eachMethod(t, path, func(jm *jarMethod) {
		plain = append(plain, edit(jm, k, false))
		k++
	})
	k = 0
	encoded := 0
	eachMethod(t, path, func(jm *jarMethod) {
		got := edit(jm, k, true)
		if got != plain[k] {
			t.Fatalf("%s: with released bodies reused: %.200s\nwithout: %.200s", jm.info, got, plain[k])
		}
		if !strings.ContainsAny(got, " :") {
			encoded++
		}
		k++
	})
	if encoded < k/4 {
		t.Fatalf("only %d of %d methods encoded: the test edits too little", encoded, k)
	}
}
