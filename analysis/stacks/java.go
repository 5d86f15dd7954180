package stacks

import (
	"strings"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// MethodFrameOf names the frame of a method as the site table writes it,
// "package.Class.method(descriptor)", at line (-1 or 0 when unknown).
//
// The name keeps the parameter types, by their simple names, so that overloads stay apart in
// a flame graph, and leaves out the descriptor's ';' and '/' that collapsed stacks and pprof's
// name shortening read as separators: "demo.lib.TextTable.line([Ljava/lang/String;)V" becomes
// "demo.lib.TextTable.line(String[])". A method the table could not name (an unknown site's
// "(unknown method)", "<ambiguous: ...>") keeps its text and has no file.
func MethodFrameOf(method string, line int) Frame {
	f := Frame{Kind: MethodFrame, Name: method, Method: method, Line: max(line, 0)}
	open := strings.IndexByte(method, '(')
	if open <= 0 {
		return f
	}
	qualified := method[:open]
	dot := strings.LastIndexByte(qualified, '.')
	if dot <= 0 {
		return f
	}
	class, name := qualified[:dot], qualified[dot+1:]
	if strings.ContainsAny(class, " <>;/()") || strings.ContainsAny(name, " <>") && !isSpecialMethod(name) {
		return f
	}
	md, err := classfile.ParseMethodDescriptor(method[open:])
	if err != nil {
		return f
	}
	params := make([]string, len(md.Args))
	for i, a := range md.Args {
		params[i] = simpleType(a)
	}
	f.Name = qualified + "(" + strings.Join(params, ", ") + ")"
	f.File = SourceFile(class)
	return f
}

// isSpecialMethod reports the names of constructors and class initialisers, the only method
// names with angle brackets.
func isSpecialMethod(name string) bool { return name == "<init>" || name == "<clinit>" }

// SourceFile derives the source file of a class from its name, as javac lays sources out:
// the package as directories and the outermost class's name, "a/b/Foo.java" for a.b.Foo$Inner.
// pprof's -source_path then finds the file under a source root. It is a guess: classes of
// other JVM languages, and a second top-level class of a file, live in files named otherwise.
func SourceFile(class string) string {
	pkg, simple := "", class
	if dot := strings.LastIndexByte(class, '.'); dot >= 0 {
		pkg, simple = class[:dot+1], class[dot+1:]
	}
	// A '$' past the first character starts a nested or synthetic class's own part.
	if i := strings.IndexByte(simple[min(1, len(simple)):], '$'); i >= 0 {
		simple = simple[:i+1]
	}
	if simple == "" {
		return ""
	}
	return strings.ReplaceAll(pkg, ".", "/") + simple + ".java"
}

// simpleType is a field descriptor as Java source would write its type, by simple name:
// "[Ljava/lang/String;" → "String[]", "J" → "long", "Ljava/util/Map$Entry;" → "Map$Entry".
func simpleType(desc string) string {
	dims, elem := classfile.ArrayDims(desc)
	var name string
	switch elem {
	case "Z":
		name = "boolean"
	case "B":
		name = "byte"
	case "C":
		name = "char"
	case "S":
		name = "short"
	case "I":
		name = "int"
	case "J":
		name = "long"
	case "F":
		name = "float"
	case "D":
		name = "double"
	default:
		name = strings.TrimSuffix(strings.TrimPrefix(elem, "L"), ";")
		if slash := strings.LastIndexByte(name, '/'); slash >= 0 {
			name = name[slash+1:]
		}
	}
	return name + strings.Repeat("[]", dims)
}
