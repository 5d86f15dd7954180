package classfile

import (
	"fmt"
	"strings"
)

// MaxArrayDims is the most array dimensions a descriptor may have (JVMS 4.3.2).
const MaxArrayDims = 255

// DescriptorError reports a malformed field or method descriptor and where in it the problem is.
type DescriptorError struct {
	Desc   string
	Offset int // byte offset in Desc
	Msg    string
}

func (e *DescriptorError) Error() string {
	return fmt.Sprintf("descriptor %q: offset %d: %s", e.Desc, e.Offset, e.Msg)
}

// MethodDescriptor is a parsed method descriptor. Args and Return hold field descriptors exactly
// as they appear in the method descriptor ("I", "[Ljava/lang/String;"); Return is "V" for void.
type MethodDescriptor struct {
	Args   []string
	Return string
}

// ParseMethodDescriptor splits a method descriptor such as "(IJ[Ljava/lang/String;)V" into its
// argument and return types, validating every one of them.
func ParseMethodDescriptor(desc string) (MethodDescriptor, error) {
	var md MethodDescriptor
	if len(desc) == 0 || desc[0] != '(' {
		return md, &DescriptorError{desc, 0, "method descriptor must start with '('"}
	}
	i := 1
	for {
		if i >= len(desc) {
			return md, &DescriptorError{desc, i, "missing ')'"}
		}
		if desc[i] == ')' {
			i++
			break
		}
		n, err := FieldTypeEnd(desc, i)
		if err != nil {
			return md, err
		}
		md.Args = append(md.Args, desc[i:n])
		i = n
	}
	if i < len(desc) && desc[i] == 'V' {
		if i+1 != len(desc) {
			return md, &DescriptorError{desc, i + 1, "text after return type"}
		}
		md.Return = "V"
		return md, nil
	}
	n, err := FieldTypeEnd(desc, i)
	if err != nil {
		return md, err
	}
	if n != len(desc) {
		return md, &DescriptorError{desc, n, "text after return type"}
	}
	md.Return = desc[i:]
	return md, nil
}

// ArgSlots is the number of local-variable slots the arguments take (long and double take
// two), not counting the receiver of an instance method.
func (md MethodDescriptor) ArgSlots() int {
	n := 0
	for _, a := range md.Args {
		n += TypeSlots(a)
	}
	return n
}

// ReturnSlots is the number of operand-stack slots the return value takes: 0 for void.
func (md MethodDescriptor) ReturnSlots() int { return TypeSlots(md.Return) }

// String re-assembles the descriptor.
func (md MethodDescriptor) String() string {
	var sb strings.Builder
	sb.WriteByte('(')
	for _, a := range md.Args {
		sb.WriteString(a)
	}
	sb.WriteByte(')')
	sb.WriteString(md.Return)
	return sb.String()
}

// MethodArgSlots returns the argument slot count of method descriptor desc; the receiver is not
// counted.
func MethodArgSlots(desc string) (int, error) {
	args, _, ok := MethodSlots(desc)
	if !ok {
		_, err := ParseMethodDescriptor(desc) // says what is wrong
		if err == nil {
			err = &DescriptorError{desc, 0, "malformed method descriptor"}
		}
		return 0, err
	}
	return args, nil
}

// TypeSlots returns the slots a value of field descriptor t takes on the stack or in locals:
// 2 for long and double, 0 for "V", 1 otherwise. t is assumed valid.
func TypeSlots(t string) int {
	if t == "" {
		return 0
	}
	switch t[0] {
	case 'J', 'D':
		return 2
	case 'V':
		return 0
	}
	return 1
}

// ValidateFieldDescriptor checks that desc is exactly one field type.
func ValidateFieldDescriptor(desc string) error {
	n, err := FieldTypeEnd(desc, 0)
	if err != nil {
		return err
	}
	if n != len(desc) {
		return &DescriptorError{desc, n, "text after field type"}
	}
	return nil
}

// IsReference reports whether field descriptor t is an object or array type.
func IsReference(t string) bool { return t != "" && (t[0] == 'L' || t[0] == '[') }

// ClassOfDescriptor returns the internal name a reference descriptor denotes as a
// CONSTANT_Class would name it: "Ljava/lang/String;" → "java/lang/String", arrays unchanged
// ("[I" → "[I"). ok is false for primitive types.
func ClassOfDescriptor(t string) (name string, ok bool) {
	switch {
	case len(t) >= 3 && t[0] == 'L' && t[len(t)-1] == ';':
		return t[1 : len(t)-1], true
	case len(t) >= 2 && t[0] == '[':
		return t, true
	}
	return "", false
}

// DescriptorOfClass is the inverse of ClassOfDescriptor: a CONSTANT_Class name to a field
// descriptor ("java/lang/String" → "Ljava/lang/String;", "[I" stays).
func DescriptorOfClass(internalName string) string {
	if strings.HasPrefix(internalName, "[") {
		return internalName
	}
	return "L" + internalName + ";"
}

// ArrayDims returns the number of leading '[' of a field descriptor and the element type.
func ArrayDims(t string) (dims int, elem string) {
	for dims < len(t) && t[dims] == '[' {
		dims++
	}
	return dims, t[dims:]
}

// FieldTypeEnd returns the offset just past the field type starting at desc[i], checking it as
// JVMS 4.3.2 asks. It is the one descriptor scanner: ParseMethodDescriptor, MethodSlots (which
// max_stack and the decoder run over pool bytes without copying them) and the frame
// inference's method types all step through descriptors with it. It allocates only to report
// an error.
func FieldTypeEnd[T ~string | ~[]byte](desc T, i int) (int, error) {
	start := i
	for i < len(desc) && desc[i] == '[' {
		i++
	}
	if i-start > MaxArrayDims {
		return 0, &DescriptorError{string(desc), start, fmt.Sprintf("%d array dimensions, at most %d allowed", i-start, MaxArrayDims)}
	}
	if i >= len(desc) {
		return 0, &DescriptorError{string(desc), i, "missing type"}
	}
	switch desc[i] {
	case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z':
		return i + 1, nil
	case 'L':
		j := i + 1
		// One table lookup a byte: max_stack scans every invoke's descriptor through here.
		for j < len(desc) && !nameStop[desc[j]] {
			j++
		}
		if j < len(desc) && desc[j] != ';' {
			return 0, &DescriptorError{string(desc), j, fmt.Sprintf("character %q in class name", desc[j])}
		}
		if j >= len(desc) {
			return 0, &DescriptorError{string(desc), i, "class name without ';'"}
		}
		if j == i+1 {
			return 0, &DescriptorError{string(desc), i, "empty class name"}
		}
		return j + 1, nil
	}
	return 0, &DescriptorError{string(desc), i, fmt.Sprintf("unexpected %q", desc[i])}
}

// nameStop marks the bytes that end a class name in a descriptor: ';', or one it may not hold.
var nameStop = [256]bool{';': true, '.': true, '[': true, '(': true, ')': true}

// MethodSlots returns the argument slots (the receiver not counted) and return slots of a method
// descriptor, scanning it in place: the hot max_stack path must not allocate per call site. ok
// is false when desc is malformed.
func MethodSlots[T ~string | ~[]byte](desc T) (args, ret int, ok bool) {
	if len(desc) == 0 || desc[0] != '(' {
		return 0, 0, false
	}
	i := 1
	for i < len(desc) && desc[i] != ')' {
		end, err := FieldTypeEnd(desc, i)
		if err != nil {
			return 0, 0, false
		}
		args += slotsOf(desc[i], end-i)
		i = end
	}
	if i >= len(desc) {
		return 0, 0, false
	}
	i++
	if i < len(desc) && desc[i] == 'V' {
		if i+1 != len(desc) {
			return 0, 0, false
		}
		return args, 0, true
	}
	end, err := FieldTypeEnd(desc, i)
	if err != nil || end != len(desc) {
		return 0, 0, false
	}
	return args, slotsOf(desc[i], end-i), true
}

// FieldSlots returns the slots a value of field descriptor desc takes, scanning it in place;
// ok is false unless desc is exactly one valid field type.
func FieldSlots[T ~string | ~[]byte](desc T) (slots int, ok bool) {
	end, err := FieldTypeEnd(desc, 0)
	if err != nil || end != len(desc) {
		return 0, false
	}
	return slotsOf(desc[0], end), true
}

// slotsOf is the slot count of a valid field type that starts with first and is n bytes long:
// 2 for a bare long or double, 1 for anything else (an array of longs is one reference).
func slotsOf(first byte, n int) int {
	if n == 1 && (first == 'J' || first == 'D') {
		return 2
	}
	return 1
}

// JavaName turns an internal class name into the Java one: "java/util/Map$Entry" →
// "java.util.Map$Entry". Array class names keep their descriptor form; JavaTypeName spells
// them as Java does.
func JavaName(internal string) string { return strings.ReplaceAll(internal, "/", ".") }

// InternalName turns a Java class or package name into the internal form: "java.util.Map" →
// "java/util/Map".
func InternalName(java string) string { return strings.ReplaceAll(java, ".", "/") }

// JavaTypeName turns a field descriptor, or an array class name, into a Java type name:
// "[[I" → "int[][]", "Ljava/lang/String;" → "java.lang.String". A plain internal class name
// ("java/lang/String") is taken as the class it names.
func JavaTypeName(desc string) string {
	dims, elem := ArrayDims(desc)
	base := JavaName(elem)
	if len(elem) == 1 && primitiveNames[elem[0]] != "" {
		base = primitiveNames[elem[0]]
	} else if c, ok := ClassOfDescriptor(elem); ok {
		base = JavaName(c)
	}
	return base + strings.Repeat("[]", dims)
}

var primitiveNames = [256]string{'Z': "boolean", 'B': "byte", 'C': "char", 'S': "short", 'I': "int", 'J': "long", 'F': "float", 'D': "double", 'V': "void"}

// newarrayClasses are the array classes newarray makes, by its atype operand (JVMS 6.5).
var newarrayClasses = [...]string{4: "[Z", 5: "[C", 6: "[F", 7: "[D", 8: "[B", 9: "[S", 10: "[I", 11: "[J"}

// NewArrayClass returns the class of the array newarray with operand atype makes ("[I" for
// 10), and false for an atype the JVM rejects. Its element descriptor is the class less its
// '['.
func NewArrayClass(atype int32) (string, bool) {
	if atype < 0 || int(atype) >= len(newarrayClasses) || newarrayClasses[atype] == "" {
		return "", false
	}
	return newarrayClasses[atype], true
}
