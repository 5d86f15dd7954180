package frames

import (
	"fmt"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// Initial returns the implicit frame at offset 0 of a method (JVMS 4.10.1.6): the receiver,
// then the arguments, and an empty stack. In a constructor of any class but java/lang/Object
// the receiver is uninitializedThis until the constructor's own super()/this() call.
func Initial(class, name, desc string, access uint16) (Frame, error) {
	var buf [8]Type
	args, _, _, err := methodTypes(desc, buf[:0])
	if err != nil {
		return Frame{}, err
	}
	f := Frame{Locals: make([]Type, 0, len(args)*2+1)}
	if access&classfile.AccStatic == 0 {
		if name == "<init>" && class != ObjectClass {
			f.Locals = append(f.Locals, UninitThis)
		} else {
			f.Locals = append(f.Locals, ObjectType(class))
		}
	}
	for _, t := range args {
		f.Locals = append(f.Locals, t)
		if t.IsWide() {
			f.Locals = append(f.Locals, TopType)
		}
	}
	return f, nil
}

// FieldType returns the verification type of a value of field descriptor desc as the JVM's
// type checker sees it: boolean, byte, char and short are int.
func FieldType(desc string) (Type, error) {
	if desc == "" {
		return Type{}, fmt.Errorf("empty field descriptor")
	}
	switch desc[0] {
	case 'Z', 'B', 'C', 'S', 'I':
		return IntType, nil
	case 'F':
		return FloatType, nil
	case 'J':
		return LongType, nil
	case 'D':
		return DoubleType, nil
	}
	if c, ok := classfile.ClassOfDescriptor(desc); ok {
		return ObjectType(c), nil
	}
	return Type{}, fmt.Errorf("%q is not a field descriptor", desc)
}
