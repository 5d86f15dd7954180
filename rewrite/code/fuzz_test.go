package code

import (
	"encoding/binary"
	"testing"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

var fuzzAttrNames = []string{"LineNumberTable", "LocalVariableTable", "LocalVariableTypeTable",
	"RuntimeVisibleTypeAnnotations", "RuntimeInvisibleTypeAnnotations", "StackMapTable", "Unknown"}

// FuzzDecode feeds arbitrary bytecode and one arbitrary Code sub-attribute to Decode. Whatever
// decodes must encode again (with and without an edit) and decode once more; nothing panics.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0, 0, 1, byte(RETURN)})
	f.Add([]byte{0, 0, 7, byte(ICONST_0), byte(IFEQ), 0, 4, byte(NOP), byte(NOP), byte(RETURN), 0, 1, 0, 0, 0, 1})
	f.Add([]byte{5, 0, 6, byte(ICONST_0), byte(IFEQ), 0, 4, byte(NOP), byte(RETURN), 0, 1, 5})
	f.Add(append([]byte{3, 0, 5, byte(ACONST_NULL), byte(ASTORE_0), byte(ALOAD_0), byte(POP), byte(RETURN)},
		0, 1, 0x40, 0, 1, 0, 2, 0, 3, 0, 0, 0, 0, 7, 0, 1, 0, 9, '[', 0, 1, '@', 0, 3, 0, 0))
	f.Add(append([]byte{0, 0, 30, byte(ICONST_1), byte(TABLESWITCH), 0, 0}, append(append(be32(27), be32(0)...), append(be32(1), append(be32(23), be32(25)...)...)...)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		pool := newPool()
		name, _ := pool.AddUtf8(fuzzAttrNames[int(data[0])%len(fuzzAttrNames)])
		n := int(binary.BigEndian.Uint16(data[1:]))
		rest := data[3:]
		if n == 0 || n > len(rest) {
			return
		}
		c := &classfile.Code{MaxStack: 2, MaxLocals: 2, Bytecode: rest[:n]}
		if len(rest) > n {
			c.Attributes = []*classfile.Attribute{{NameIndex: name, Data: rest[n:]}}
		}
		b, err := Decode(c, pool, testMethod)
		if err != nil {
			return
		}
		b.ComputeMax()
		if _, err := b.Encode(); err != nil {
			t.Fatalf("decoded code does not encode: %v", err)
		}
		b.InsertBefore(b.First(), b.Seq().Op(NOP))
		out, err := b.Encode()
		if err != nil {
			return // refusals (unknown attribute, stack map) and flow errors are fine
		}
		if _, err := Decode(out, pool, testMethod); err != nil {
			t.Fatalf("edited code does not decode again: %v", err)
		}
	})
}
