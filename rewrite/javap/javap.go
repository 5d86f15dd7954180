// Package javap prints class files the way javap -v does, from package classfile's model and
// package code's decoding: what `heapledger inspect` shows, and a reader's view of what a pass
// wrote. It prints what the class file holds, including what javap would reject.
package javap

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/frames"
)

// Options choose what Print shows.
type Options struct {
	Pool   bool   // the constant pool
	Code   bool   // each method's code, exception table, frames, line numbers and local variables
	Method string // only the methods of this name (all overloads); "" for all
}

// Release names the Java release that introduced a class file major version.
func Release(major uint16) string {
	switch {
	case major < 45:
		return "unknown"
	case major <= 48:
		return fmt.Sprintf("Java 1.%d", major-44)
	default:
		return fmt.Sprintf("Java %d", major-44)
	}
}

// flagNames lists access flags by the structure they belong to, since the same bit means
// different things on a class, a field and a method.
var (
	classFlagNames  = []string{"PUBLIC", "", "", "", "FINAL", "SUPER", "", "", "", "INTERFACE", "ABSTRACT", "", "SYNTHETIC", "ANNOTATION", "ENUM", "MODULE"}
	fieldFlagNames  = []string{"PUBLIC", "PRIVATE", "PROTECTED", "STATIC", "FINAL", "", "VOLATILE", "TRANSIENT", "", "", "", "", "SYNTHETIC", "", "ENUM", ""}
	methodFlagNames = []string{"PUBLIC", "PRIVATE", "PROTECTED", "STATIC", "FINAL", "SYNCHRONIZED", "BRIDGE", "VARARGS", "NATIVE", "", "ABSTRACT", "STRICT", "SYNTHETIC", "", "", ""}
)

func flagString(flags uint16, names []string) string {
	s := fmt.Sprintf("0x%04x", flags)
	for bit, n := range names {
		if flags&(1<<bit) == 0 {
			continue
		}
		if n == "" {
			n = fmt.Sprintf("0x%04x", 1<<bit)
		} else {
			n = "ACC_" + n
		}
		s += " " + n
	}
	return s
}

// Print prints the class file data, named name in messages, as javap -v would: version,
// flags, this/super/interfaces, constant pool, fields and methods, and with Options.Code each
// method's instructions, exception table, frames, line numbers and local variables.
func Print(w io.Writer, name string, data []byte, opt Options) error {
	c, err := classfile.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	p := c.Pool
	fmt.Fprintf(w, "class %s\n", c.Name())
	fmt.Fprintf(w, "  file: %s (%d bytes)\n", name, len(data))
	fmt.Fprintf(w, "  version: %d.%d (%s)\n", c.Major, c.Minor, Release(c.Major))
	fmt.Fprintf(w, "  flags: %s\n", flagString(c.AccessFlags, classFlagNames))
	fmt.Fprintf(w, "  this_class: #%d  // %s\n", c.ThisClass, c.Name())
	if c.SuperClass == 0 {
		fmt.Fprintf(w, "  super_class: none\n")
	} else {
		fmt.Fprintf(w, "  super_class: #%d  // %s\n", c.SuperClass, c.SuperName())
	}
	fmt.Fprintf(w, "  interfaces: %d", len(c.Interfaces))
	if len(c.Interfaces) > 0 {
		fmt.Fprintf(w, "  // %s", strings.Join(c.InterfaceNames(), ", "))
	}
	fmt.Fprintln(w)
	if opt.Pool {
		fmt.Fprintf(w, "Constant pool (%d entries):\n", p.Len()-1)
		width := len(strconv.Itoa(p.Len()))
		for i := 1; i < p.Len(); i++ {
			k := &p.Entries[i]
			if k.Tag == 0 {
				continue
			}
			fmt.Fprintf(w, "  %*s = %-18s %s\n", width+1, "#"+strconv.Itoa(i), classfile.TagName(k.Tag), describeConstant(p, uint16(i)))
		}
	}
	fmt.Fprintf(w, "Fields (%d):\n", len(c.Fields))
	for _, f := range c.Fields {
		fmt.Fprintf(w, "  %s\n", f.String(p))
		fmt.Fprintf(w, "    flags: %s\n", flagString(f.AccessFlags, fieldFlagNames))
		printAttributeNames(w, "    ", p, f.Attributes)
	}
	shown := 0
	for _, m := range c.Methods {
		if opt.Method == "" || m.Name(p) == opt.Method {
			shown++
		}
	}
	if opt.Method != "" {
		if shown == 0 {
			return fmt.Errorf("%s: class %s has no method named %q", name, c.Name(), opt.Method)
		}
		fmt.Fprintf(w, "Methods (%d of %d, named %s):\n", shown, len(c.Methods), opt.Method)
	} else {
		fmt.Fprintf(w, "Methods (%d):\n", len(c.Methods))
	}
	for _, m := range c.Methods {
		if opt.Method != "" && m.Name(p) != opt.Method {
			continue
		}
		fmt.Fprintf(w, "  %s\n", m.String(p))
		fmt.Fprintf(w, "    flags: %s\n", flagString(m.AccessFlags, methodFlagNames))
		printAttributeNames(w, "    ", p, m.Attributes)
		if err := printCode(w, c, m, opt); err != nil {
			fmt.Fprintf(w, "    error: %v\n", err)
		}
	}
	fmt.Fprintf(w, "Class attributes (%d):\n", len(c.Attributes))
	for _, a := range c.Attributes {
		fmt.Fprintf(w, "  %s (%d bytes)%s\n", classfile.AttributeName(p, a), len(a.Data), describeClassAttribute(c, a))
	}
	return nil
}

func printAttributeNames(w io.Writer, indent string, p *classfile.Pool, attrs []*classfile.Attribute) {
	if len(attrs) == 0 {
		return
	}
	names := make([]string, len(attrs))
	for i, a := range attrs {
		names[i] = fmt.Sprintf("%s(%d)", classfile.AttributeName(p, a), len(a.Data))
	}
	fmt.Fprintf(w, "%sattributes: %s\n", indent, strings.Join(names, " "))
	for _, a := range attrs {
		name := classfile.AttributeName(p, a)
		switch name {
		case "Signature", "ConstantValue":
			if i, err := classfile.ParseIndex(a); err == nil {
				fmt.Fprintf(w, "%s%s: #%d  // %s\n", indent, name, i, constantText(p, i))
			}
		case "Exceptions":
			if idx, err := classfile.ParseIndexList(a); err == nil {
				names := make([]string, len(idx))
				for i, x := range idx {
					names[i] = constantText(p, x)
				}
				fmt.Fprintf(w, "%sthrows: %s\n", indent, strings.Join(names, ", "))
			}
		}
	}
}

// describeClassAttribute summarises the class attributes that have a parsed form.
func describeClassAttribute(c *classfile.Class, a *classfile.Attribute) string {
	p := c.Pool
	classes := func(idx []uint16) string {
		names := make([]string, len(idx))
		for i, x := range idx {
			names[i] = constantText(p, x)
		}
		return strings.Join(names, ", ")
	}
	switch classfile.AttributeName(p, a) {
	case "SourceFile", "Signature", "NestHost":
		if i, err := classfile.ParseIndex(a); err == nil {
			return "  // " + constantText(p, i)
		}
	case "NestMembers", "PermittedSubclasses":
		if idx, err := classfile.ParseIndexList(a); err == nil {
			return "  // " + classes(idx)
		}
	case "InnerClasses":
		if ics, err := classfile.ParseInnerClasses(a); err == nil {
			idx := make([]uint16, len(ics))
			for i, ic := range ics {
				idx[i] = ic.Inner
			}
			return "  // " + classes(idx)
		}
	case "Record":
		if rcs, err := classfile.ParseRecord(a); err == nil {
			parts := make([]string, len(rcs))
			for i, rc := range rcs {
				parts[i] = constantText(p, rc.NameIndex) + ":" + constantText(p, rc.DescriptorIndex)
			}
			return "  // " + strings.Join(parts, ", ")
		}
	case "BootstrapMethods":
		if bms, err := classfile.ParseBootstrapMethods(a); err == nil {
			var sb strings.Builder
			for i, bm := range bms {
				fmt.Fprintf(&sb, "\n    %d: #%d  // %s", i, bm.MethodRef, constantText(p, bm.MethodRef))
				for _, arg := range bm.Args {
					fmt.Fprintf(&sb, "\n        #%d  // %s %s", arg, constantTag(p, arg), constantText(p, arg))
				}
			}
			return sb.String()
		}
	}
	return ""
}

// constantTag names the tag of constant i, for listings.
func constantTag(p *classfile.Pool, i uint16) string {
	k, err := p.Entry(i)
	if err != nil {
		return "invalid"
	}
	return classfile.TagName(k.Tag)
}

// constantText is the plain value a constant stands for: the string of a Utf8, the name of a
// Class, the value of a number.
func constantText(p *classfile.Pool, i uint16) string {
	k, err := p.Entry(i)
	if err != nil {
		return fmt.Sprintf("<invalid #%d>", i)
	}
	switch k.Tag {
	case classfile.TagUtf8:
		s, err := p.Utf8(i)
		if err != nil {
			return fmt.Sprintf("<bad Utf8 #%d: %v>", i, err)
		}
		return s
	case classfile.TagClass, classfile.TagModule, classfile.TagPackage, classfile.TagMethodType:
		return constantText(p, k.A)
	case classfile.TagString:
		return strconv.Quote(constantText(p, k.A))
	case classfile.TagInteger:
		return strconv.FormatInt(int64(int32(be32(k.Bytes))), 10)
	case classfile.TagFloat:
		return strconv.FormatFloat(float64(math.Float32frombits(be32(k.Bytes))), 'g', -1, 32) + "f"
	case classfile.TagLong:
		return strconv.FormatInt(int64(be64(k.Bytes)), 10) + "L"
	case classfile.TagDouble:
		return strconv.FormatFloat(math.Float64frombits(be64(k.Bytes)), 'g', -1, 64) + "d"
	case classfile.TagFieldref, classfile.TagMethodref, classfile.TagInterfaceMethodref:
		owner, name, desc, err := p.MemberRef(i)
		if err != nil {
			return fmt.Sprintf("<%v>", err)
		}
		if k.Tag == classfile.TagFieldref {
			return owner + "." + name + ":" + desc
		}
		return owner + "." + name + desc
	case classfile.TagNameAndType:
		return constantText(p, k.A) + ":" + constantText(p, k.B)
	case classfile.TagMethodHandle:
		return refKindName(k.A) + " " + constantText(p, k.B)
	case classfile.TagDynamic, classfile.TagInvokeDynamic:
		return fmt.Sprintf("bootstrap %d %s", k.A, constantText(p, k.B))
	}
	return fmt.Sprintf("<tag %d>", k.Tag)
}

// describeConstant is a pool listing line: the raw operands, then the resolved value.
func describeConstant(p *classfile.Pool, i uint16) string {
	k, err := p.Entry(i)
	if err != nil {
		return fmt.Sprintf("<invalid #%d>", i)
	}
	switch k.Tag {
	case classfile.TagUtf8, classfile.TagInteger, classfile.TagFloat, classfile.TagLong, classfile.TagDouble:
		if k.Tag == classfile.TagUtf8 {
			return strconv.Quote(constantText(p, i))
		}
		return constantText(p, i)
	case classfile.TagClass, classfile.TagString, classfile.TagMethodType, classfile.TagModule, classfile.TagPackage:
		return fmt.Sprintf("#%-12d // %s", k.A, constantText(p, i))
	case classfile.TagMethodHandle:
		return fmt.Sprintf("%-13s // %s", fmt.Sprintf("%d:#%d", k.A, k.B), constantText(p, i))
	case classfile.TagNameAndType:
		return fmt.Sprintf("%-13s // %s", fmt.Sprintf("#%d:#%d", k.A, k.B), constantText(p, i))
	default:
		return fmt.Sprintf("%-13s // %s", fmt.Sprintf("#%d.#%d", k.A, k.B), constantText(p, i))
	}
}

var refKinds = []string{"", "REF_getField", "REF_getStatic", "REF_putField", "REF_putStatic",
	"REF_invokeVirtual", "REF_invokeStatic", "REF_invokeSpecial", "REF_newInvokeSpecial", "REF_invokeInterface"}

func refKindName(k uint16) string {
	if int(k) < len(refKinds) && k > 0 {
		return refKinds[k]
	}
	return fmt.Sprintf("REF_kind%d", k)
}

func be32(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func be64(b []byte) uint64 {
	if len(b) < 8 {
		return 0
	}
	return uint64(be32(b))<<32 | uint64(be32(b[4:]))
}

// printCode prints the Code attribute of m. Without --code only its sizes are shown.
func printCode(w io.Writer, c *classfile.Class, m *classfile.Member, opt Options) error {
	cd, _, err := c.MethodCode(m)
	if err != nil || cd == nil {
		return err
	}
	p := c.Pool
	fmt.Fprintf(w, "    Code: max_stack=%d max_locals=%d code_length=%d exception_table=%d\n",
		cd.MaxStack, cd.MaxLocals, len(cd.Bytecode), len(cd.Exceptions))
	if !opt.Code {
		return nil
	}
	meth := code.Method{Class: c.Name(), Name: m.Name(p), Desc: m.Descriptor(p), Access: m.AccessFlags, Major: c.Major}
	body, err := code.Decode(cd, p, meth)
	if err != nil {
		return err
	}
	for n := body.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			fmt.Fprintf(w, "     %s\n", n)
			continue
		}
		fmt.Fprintf(w, "      %5d: %s%s\n", n.Offset, n, insnComment(p, n))
		if n.Switch != nil {
			for k, t := range n.Switch.Targets {
				key := n.Switch.Low + int32(k)
				if n.Switch.Keys != nil {
					key = n.Switch.Keys[k]
				}
				fmt.Fprintf(w, "             %11d: L%d\n", key, t.Offset)
			}
			fmt.Fprintf(w, "                 default: L%d\n", n.Switch.Default.Offset)
		}
	}
	if len(cd.Exceptions) > 0 {
		fmt.Fprintf(w, "    Exception table:\n       from    to  target  type\n")
		for _, e := range cd.Exceptions {
			t := "any"
			if e.CatchType != 0 {
				t = "Class " + constantText(p, e.CatchType)
			}
			fmt.Fprintf(w, "      %5d %5d %7d  %s\n", e.StartPC, e.EndPC, e.HandlerPC, t)
		}
	}
	for _, a := range body.Attrs {
		switch a.Kind {
		case code.AttrLineNumbers:
			fmt.Fprintf(w, "    LineNumberTable:\n")
			for _, ln := range a.Lines {
				fmt.Fprintf(w, "      line %d: %d\n", ln.Line, ln.Start.Offset)
			}
		case code.AttrLocalVars, code.AttrLocalVarTypes:
			title := "LocalVariableTable"
			if a.Kind == code.AttrLocalVarTypes {
				title = "LocalVariableTypeTable"
			}
			fmt.Fprintf(w, "    %s:\n      start  length  slot  name  %s\n", title, map[bool]string{true: "signature", false: "descriptor"}[a.Kind == code.AttrLocalVarTypes])
			vars := append([]code.LocalVar(nil), a.Vars...)
			sort.SliceStable(vars, func(i, j int) bool { return vars[i].Index < vars[j].Index })
			for _, v := range vars {
				fmt.Fprintf(w, "      %5d  %6d  %4d  %s  %s\n", v.Start.Offset, v.End.Offset-v.Start.Offset, v.Index, constantText(p, v.Name), constantText(p, v.Desc))
			}
		case code.AttrStackMap:
			printFrames(w, c, m, cd, a.Raw)
		case code.AttrVisibleTypeAnnotations, code.AttrInvisibleTypeAnnotations:
			fmt.Fprintf(w, "    %s: %d type annotations\n", attrName(p, a), len(a.Annos))
			for _, an := range a.Annos {
				at := ""
				switch {
				case an.Insn != nil:
					at = fmt.Sprintf(" at %d: %s", an.Insn.Offset, an.Insn)
				case an.Ranges != nil:
					at = fmt.Sprintf(" on %d local variable ranges", len(an.Ranges))
				case an.TargetType == 0x42:
					at = fmt.Sprintf(" on exception table entry %d", an.ExceptionIndex)
				}
				fmt.Fprintf(w, "      target type 0x%02x%s\n", an.TargetType, at)
			}
		default:
			fmt.Fprintf(w, "    %s (%d bytes)\n", attrName(p, a), len(a.Raw))
		}
	}
	return nil
}

func attrName(p *classfile.Pool, a *code.Attr) string {
	return classfile.AttributeName(p, &classfile.Attribute{NameIndex: a.Name})
}

func printFrames(w io.Writer, c *classfile.Class, m *classfile.Member, cd *classfile.Code, raw []byte) {
	p := c.Pool
	initial, err := frames.Initial(c.Name(), m.Name(p), m.Descriptor(p), m.AccessFlags)
	if err != nil {
		fmt.Fprintf(w, "    StackMapTable: error: %v\n", err)
		return
	}
	entries, err := frames.Decode(raw, p, initial, frames.Limits{CodeLength: len(cd.Bytecode), MaxLocals: int(cd.MaxLocals), MaxStack: int(cd.MaxStack)})
	if err != nil {
		fmt.Fprintf(w, "    StackMapTable: error: %v\n", err)
		return
	}
	fmt.Fprintf(w, "    StackMapTable: %d frames\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(w, "      L%d: %s\n", e.Offset, e.Frame)
	}
}

// insnComment resolves the constant an instruction refers to, as javap's trailing comment does.
func insnComment(p *classfile.Pool, n *code.Insn) string {
	switch {
	case n.Index != 0:
		kind := constantTag(p, n.Index)
		switch kind {
		case "Fieldref", "Methodref", "InterfaceMethodref":
			kind = strings.TrimSuffix(kind, "ref")
		}
		return "  // " + kind + " " + constantText(p, n.Index)
	case n.Op == code.NEWARRAY:
		if c, ok := classfile.NewArrayClass(n.Int); ok {
			return "  // " + classfile.JavaTypeName(c[1:])
		}
	}
	return ""
}
