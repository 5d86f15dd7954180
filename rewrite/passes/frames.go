package passes

import (
	"fmt"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// attachFrames gives an edited body what it needs to write its StackMapTable.
func attachFrames(cf *classfile.Class, b *code.Body) error {
	if cf.Major < 50 {
		return nil // the type-inferring verifier checks these; they have no frames
	}
	return fmt.Errorf("%s: frames: not yet integrated", b.Method)
}

// initCalls returns the super()/this() calls of a constructor, nil for other methods.
func initCalls(cf *classfile.Class, m *classfile.Member, b *code.Body) ([]*code.Insn, error) {
	if b.Method.Name != "<init>" {
		return nil, nil
	}
	// interim: find invokespecial <init> on aload_0 in old code
	var out []*code.Insn
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op == code.INVOKESPECIAL {
			owner, name, _, _ := cf.Pool.MemberRef(n.Index)
			if name == "<init>" && (owner == cf.Name() || owner == cf.SuperName()) {
				out = append(out, n)
			}
		}
	}
	return out, nil
}
