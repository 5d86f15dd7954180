package frames

import (
	"testing"

	"github.com/heapledger/heapledger/rewrite/code"
)

// TestStackOps checks the slot semantics of the dup family and swap on stacks with one- and
// two-slot values (JVMS 6.5, forms 1 and 2 of each instruction), and that the strict machine
// refuses to split a long.
func TestStackOps(t *testing.T) {
	a, b, c := IntType, FloatType, NullType
	j := []Type{LongType, TopType}
	cat := func(parts ...any) []Type {
		var out []Type
		for _, p := range parts {
			switch v := p.(type) {
			case Type:
				out = append(out, v)
			case []Type:
				out = append(out, v...)
			}
		}
		return out
	}
	cases := []struct {
		op        code.Opcode
		in, want  []Type
		wantError bool
	}{
		{code.DUP, cat(a, b), cat(a, b, b), false},
		{code.DUP_X1, cat(a, b), cat(b, a, b), false},
		{code.DUP_X2, cat(a, b, c), cat(c, a, b, c), false},
		{code.DUP_X2, cat(j, c), cat(c, j, c), false},
		{code.DUP2, cat(a, b), cat(a, b, a, b), false},
		{code.DUP2, cat(j), cat(j, j), false},
		{code.DUP2_X1, cat(a, b, c), cat(b, c, a, b, c), false},
		{code.DUP2_X1, cat(a, j), cat(j, a, j), false},
		{code.DUP2_X2, cat(a, b, c, a), cat(c, a, a, b, c, a), false},
		{code.DUP2_X2, cat(j, j), cat(j, j, j), false},
		{code.DUP2_X2, cat(a, b, j), cat(j, a, b, j), false},
		{code.SWAP, cat(a, b), cat(b, a), false},
		{code.DUP, cat(j), nil, true},
		{code.DUP_X1, cat(j, a), nil, true},
		{code.DUP2, cat(j, a), nil, true},
		{code.DUP2_X1, cat(j, a, b), nil, true},
		{code.SWAP, cat(a, j), nil, true},
		{code.POP, cat(j), nil, true},
		{code.DUP, nil, nil, true},
	}
	for _, tc := range cases {
		f := Frame{Stack: append([]Type(nil), tc.in...)}
		m := machine{strict: true, f: &f}
		err := m.exec(&code.Insn{Op: tc.op})
		if tc.wantError {
			if err == nil {
				t.Errorf("%s on %v: no error, got %v", code.OpName(tc.op), tc.in, f.Stack)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s on %v: %v", code.OpName(tc.op), tc.in, err)
			continue
		}
		if !typesEqual(f.Stack, tc.want) {
			t.Errorf("%s on %v: got %v, want %v", code.OpName(tc.op), tc.in, f.Stack, tc.want)
		}
	}
}
