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
		n, err := fieldTypeEnd(desc, i)
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
	n, err := fieldTypeEnd(desc, i)
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

// MethodArgSlots parses desc and returns its argument slot count; the receiver is not counted.
func MethodArgSlots(desc string) (int, error) {
	md, err := ParseMethodDescriptor(desc)
	if err != nil {
		return 0, err
	}
	return md.ArgSlots(), nil
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
	n, err := fieldTypeEnd(desc, 0)
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

// fieldTypeEnd returns the offset just past the field type starting at desc[i].
func fieldTypeEnd(desc string, i int) (int, error) {
	start := i
	for i < len(desc) && desc[i] == '[' {
		i++
	}
	if i-start > MaxArrayDims {
		return 0, &DescriptorError{desc, start, fmt.Sprintf("%d array dimensions, at most %d allowed", i-start, MaxArrayDims)}
	}
	if i >= len(desc) {
		return 0, &DescriptorError{desc, i, "missing type"}
	}
	switch desc[i] {
	case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z':
		return i + 1, nil
	case 'L':
		j := i + 1
		for j < len(desc) && desc[j] != ';' {
			switch desc[j] {
			case '.', '[', '(', ')':
				return 0, &DescriptorError{desc, j, fmt.Sprintf("character %q in class name", desc[j])}
			}
			j++
		}
		if j >= len(desc) {
			return 0, &DescriptorError{desc, i, "class name without ';'"}
		}
		if j == i+1 {
			return 0, &DescriptorError{desc, i, "empty class name"}
		}
		return j + 1, nil
	}
	return 0, &DescriptorError{desc, i, fmt.Sprintf("unexpected %q", desc[i])}
}
