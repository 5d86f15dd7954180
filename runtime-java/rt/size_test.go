package rt

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// HotSpot's C2 inlines a call whose site ran at least ~100 times when the callee has at most
// FreqInlineSize (325) bytes of bytecode. The counting fast paths are inlined at every allocation
// site of the program, so every byte of theirs is charged to the inlining budget of the program's
// methods; their shared slow path must stay out of line (above the limit), or a profile taken
// while every site's first allocation goes slow would inline it everywhere.
const freqInlineSize = 325

// TestRuntimeSizes guards those sizes: the fast paths stay small, the slow path stays above the
// limit.
func TestRuntimeSizes(t *testing.T) {
	classes := build(t)
	data, err := os.ReadFile(filepath.Join(classes, "heapledger", "rt", "Acct.class"))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := classfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int{}
	for _, m := range cf.Methods {
		code, _, err := cf.MethodCode(m)
		if err != nil {
			t.Fatal(err)
		}
		if code != nil {
			sizes[m.Name(cf.Pool)+m.Descriptor(cf.Pool)] = len(code.Bytecode)
		}
	}
	// Fast paths: the '*' forms and the full-switching forms, objects and arrays.
	fast := map[string]int{
		"object(Ljava/lang/Object;Lheapledger/rt/Acct;II)Lheapledger/rt/Acct;": 180,
		"one(Ljava/lang/Object;Lheapledger/rt/Acct;IIII)Lheapledger/rt/Acct;":  200,
		"object(Ljava/lang/Object;Lheapledger/rt/Acct;I)V":                     20,
		"fast(Ljava/lang/Object;Lheapledger/rt/Acct;IIII)V":                    180,
		"count(Ljava/lang/Object;Lheapledger/rt/Acct;II)V":                     160,
	}
	for m, most := range fast {
		n, ok := sizes[m]
		if !ok {
			t.Errorf("Acct.%s not found", m)
		} else if n > most {
			t.Errorf("fast path Acct.%s has %d bytes of bytecode, want at most %d", m, n, most)
		}
	}
	slow := "slow(Ljava/lang/Object;Ljava/lang/Class;Lheapledger/rt/Acct;IIII)Lheapledger/rt/Acct;"
	if n, ok := sizes[slow]; !ok {
		t.Errorf("Acct.%s not found", slow)
	} else if n <= freqInlineSize {
		t.Errorf("slow path Acct.%s has %d bytes of bytecode; it must stay above FreqInlineSize (%d) so the JIT never inlines it", slow, n, freqInlineSize)
	}
	data, err = os.ReadFile(filepath.Join(classes, "heapledger", "rt", "Ledger.class"))
	if err != nil {
		t.Fatal(err)
	}
	if cf, err = classfile.Parse(data); err != nil {
		t.Fatal(err)
	}
	for _, m := range cf.Methods {
		if m.Name(cf.Pool) == "current" {
			code, _, err := cf.MethodCode(m)
			if err != nil {
				t.Fatal(err)
			}
			if len(code.Bytecode) > 50 {
				t.Errorf("Ledger.current has %d bytes of bytecode, want at most 50", len(code.Bytecode))
			}
		}
	}
}
