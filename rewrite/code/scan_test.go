package code

import (
	"reflect"
	"testing"
)

// TestScan: Scan steps over every operand, the padded switches and wide forms included, and
// stops when asked or at invalid code.
func TestScan(t *testing.T) {
	bc := []byte{
		byte(ICONST_0),          // 0
		byte(TABLESWITCH), 0, 0, // 1, padded to 4
		0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20, // default, low 0, high 0, one offset
		byte(WIDE), byte(IINC), 1, 0, 0, 1, // 20
		byte(NEW), 0, 1, // 26
		byte(RETURN), // 29
	}
	var got []int
	if err := Scan(bc, func(pc int, op Opcode) bool { got = append(got, pc); return true }); err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 20, 26, 29}; !reflect.DeepEqual(got, want) {
		t.Errorf("offsets %v, want %v", got, want)
	}
	got = nil
	_ = Scan(bc, func(pc int, op Opcode) bool { got = append(got, pc); return op != NEW })
	if want := []int{0, 1, 20, 26}; !reflect.DeepEqual(got, want) {
		t.Errorf("stopping at new: offsets %v, want %v", got, want)
	}
	if err := Scan([]byte{byte(NEW), 0}, func(int, Opcode) bool { return true }); err == nil {
		t.Error("a truncated new scanned without error")
	}
}
