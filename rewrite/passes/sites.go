package passes

import (
	"strings"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/commons"
)

// siteKind is what allocates at a site. The kinds table says, for each, how the site table
// names it, how its counting call finds what it counts, whether its objects run a constructor
// and whether a path counter can count it.
type siteKind uint8

const (
	kindObject       siteKind = iota // new + <init>, a second reference under the receiver (new; dup)
	kindObjectNoRef                  // new + <init> with no second reference (Scala's and Kotlin's singletons)
	kindArray                        // newarray, anewarray, a multianewarray of one dimension
	kindMulti                        // multianewarray
	kindLambda                       // capturing invokedynamic through LambdaMetafactory
	kindConcat                       // invokedynamic through StringConcatFactory
	kindClone                        // clone() of an object
	kindCloneArray                   // clone() of an array
	kindReflect                      // Constructor.newInstance, Class.newInstance
	kindReflectArray                 // Array.newInstance
)

// counting is how a counting call finds what it counts once the site's instruction ran.
type counting uint8

const (
	countRef      counting = iota // the new reference is on top: dup it and pass it
	countNoRef                    // no reference: pass the class literal, or nothing before version 49
	countArray                    // a one-dimensional array of a known type is on top
	countAnyArray                 // an array of a type known only at run time is on top
	countMulti                    // multianewarray: the array and its saved dimensions
)

var kinds = [...]struct {
	table string   // the kind's name in site tables (accounts.Kind*)
	how   counting // how it is counted
	// constructs says its objects run a constructor while the site's instruction runs (the
	// <init> call, or the call or invokedynamic that makes them), which the Object.<init> hook
	// counts then.
	constructs bool
	// pathable says a path counter can count it (--counters paths, pathcount.go): one object
	// of a type known at rewrite time, and nothing the runtime must see at the allocation.
	// Arrays need their lengths, lambdas, clones and reflection their classes: they keep their
	// own calls.
	pathable bool
}{
	kindObject:       {accounts.KindObject, countRef, true, true},
	kindObjectNoRef:  {accounts.KindObject, countNoRef, true, true},
	kindArray:        {accounts.KindArray, countArray, false, false},
	kindMulti:        {accounts.KindMulti, countMulti, false, false},
	kindLambda:       {accounts.KindLambda, countRef, true, false},
	kindConcat:       {accounts.KindConcat, countRef, true, true},
	kindClone:        {accounts.KindClone, countRef, false, false},
	kindCloneArray:   {accounts.KindCloneArray, countAnyArray, false, false},
	kindReflect:      {accounts.KindReflect, countRef, true, false},
	kindReflectArray: {accounts.KindReflectArray, countAnyArray, false, false},
}

// countings says, for each counting, the call that counts (heapledger.rt.Acct).
var countings = [...]struct {
	dup    bool   // the counted value is duplicated from the top of the stack
	method string // Acct's method
	first  string // the counted value's parameter type ("" for none; arrays: the site's type)
	// fetched says Acct.count, which has no case for a thread state not fetched yet, serves
	// it in a method that fetches the state on entry (eagerFetch).
	fetched bool
}{
	countRef:      {true, "object", "Ljava/lang/Object;", true},
	countNoRef:    {false, "object", "", false},
	countArray:    {true, "array", "", true},
	countAnyArray: {true, "anyArray", "Ljava/lang/Object;", false},
	countMulti:    {true, "multi", "Ljava/lang/Object;", false},
}

// site is one allocation found in a method.
type site struct {
	at        *code.Insn // count after this instruction
	kind      siteKind
	typ       string // Java type name
	off       int    // original offset of the allocating instruction
	arrayDesc string // kindArray: the array's descriptor as Acct.array's overload takes it
	dims      int    // kindMulti: dimensions made
	shape     int    // kindMulti: array dimensions | base type<<8
}

func (s site) how() counting { return kinds[s.kind].how }

// findSites lists the allocations of a method, in the order their IDs follow: objects in the
// order the constructor analysis meets their <init> calls, then the other kinds in code order.
// Objects are paired with the constructor call that initialises them by following
// uninitialized(new) through the code (ctormap); a constructor's own super()/this() call
// initialises uninitializedThis and is not a site.
func (e *countEditor) findSites(cf *classfile.Class, cc *countClass, cm *commons.Method) ([]site, error) {
	b := cm.Body
	var out []site
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op != code.NEW {
			continue
		}
		an, err := cm.Constructors()
		if err != nil {
			return nil, err
		}
		for _, c := range an.Allocs {
			s := site{at: c.Insn, kind: kindObjectNoRef, typ: classfile.JavaName(c.Owner), off: c.New.Offset}
			if c.Dup {
				s.kind = kindObject
			}
			out = append(out, s)
		}
		break
	}
	for n := b.First(); n != nil; n = n.Next() {
		s, ok, err := e.siteAt(cf, cc, b, n)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// siteAt returns the site of an instruction that allocates other than by new + <init>.
func (e *countEditor) siteAt(cf *classfile.Class, cc *countClass, b *code.Body, n *code.Insn) (site, bool, error) {
	pool := b.Pool
	switch n.Op {
	case code.NEWARRAY:
		class, ok := classfile.NewArrayClass(n.Int)
		if !ok {
			return site{}, false, b.Method.Errorf(n.Offset, "newarray of unknown type %d", n.Int)
		}
		return site{at: n, kind: kindArray, typ: classfile.JavaTypeName(class), off: n.Offset, arrayDesc: class}, true, nil
	case code.ANEWARRAY:
		c, err := pool.ClassName(n.Index)
		if err != nil {
			return site{}, false, b.Method.Errorf(n.Offset, "anewarray: %w", err)
		}
		return site{at: n, kind: kindArray, typ: classfile.JavaTypeName(classfile.DescriptorOfClass(c)) + "[]", off: n.Offset, arrayDesc: "[Ljava/lang/Object;"}, true, nil
	case code.MULTIANEWARRAY:
		return multiSite(b, n)
	case code.INVOKEDYNAMIC:
		return e.indySite(cf, cc, b, n)
	case code.INVOKEVIRTUAL, code.INVOKESTATIC, code.INVOKEINTERFACE:
		owner, name, desc, err := pool.MemberRef(n.Index)
		if err != nil {
			return site{}, false, b.Method.Errorf(n.Offset, "%s: %w", code.OpName(n.Op), err)
		}
		switch {
		case n.Op == code.INVOKEVIRTUAL && name == "clone" && strings.HasPrefix(desc, "()") && classfile.IsReference(desc[2:]):
			if strings.HasPrefix(owner, "[") {
				return site{at: n, kind: kindCloneArray, typ: classfile.JavaTypeName(owner), off: n.Offset}, true, nil
			}
			return site{at: n, kind: kindClone, typ: classfile.JavaName(owner), off: n.Offset}, true, nil
		case n.Op == code.INVOKESTATIC && owner == "java/lang/reflect/Array" && name == "newInstance":
			return site{at: n, kind: kindReflectArray, typ: "(reflective array)", off: n.Offset}, true, nil
		case n.Op == code.INVOKEVIRTUAL && owner == "java/lang/reflect/Constructor" && name == "newInstance",
			n.Op == code.INVOKEVIRTUAL && owner == "java/lang/Class" && name == "newInstance" && desc == "()Ljava/lang/Object;":
			return site{at: n, kind: kindReflect, typ: "(reflective object)", off: n.Offset}, true, nil
		}
	}
	return site{}, false, nil
}

// multiSite is the site of a multianewarray; one that makes a single dimension is counted as
// the one-dimensional array it is.
func multiSite(b *code.Body, n *code.Insn) (site, bool, error) {
	c, err := b.Pool.ClassName(n.Index)
	if err != nil {
		return site{}, false, b.Method.Errorf(n.Offset, "multianewarray: %w", err)
	}
	arrayDim, elem := classfile.ArrayDims(c)
	dims := int(n.Int)
	if dims < 1 || dims > arrayDim || arrayDim > classfile.MaxArrayDims {
		return site{}, false, b.Method.Errorf(n.Offset, "multianewarray %s with %d dimensions", c, dims)
	}
	s := site{at: n, kind: kindMulti, typ: classfile.JavaTypeName(c), off: n.Offset, dims: dims}
	base := int('L')
	if len(elem) == 1 {
		base = int(elem[0])
	}
	s.shape = arrayDim | base<<8
	if dims == 1 {
		s.kind, s.arrayDesc = kindArray, "[Ljava/lang/Object;"
		if arrayDim == 1 && len(elem) == 1 {
			s.arrayDesc = "[" + elem
		}
	}
	return s, true, nil
}

// indySite recognises the invokedynamic call sites that allocate: capturing lambdas
// (LambdaMetafactory with at least one captured value; a non-capturing lambda is a cached
// singleton) and string concatenation (StringConcatFactory), whose result is a new String.
func (e *countEditor) indySite(cf *classfile.Class, cc *countClass, b *code.Body, n *code.Insn) (site, bool, error) {
	fail := func(err error) (site, bool, error) {
		return site{}, false, b.Method.Errorf(n.Offset, "invokedynamic: %w", err)
	}
	c, err := b.Pool.Entry(n.Index)
	if err != nil {
		return fail(err)
	}
	_, desc, err := b.Pool.DynamicNameAndType(n.Index)
	if err != nil {
		return fail(err)
	}
	bsms, err := cc.bootstrapMethods(cf)
	if err != nil {
		return site{}, false, err
	}
	if int(c.A) >= len(bsms) {
		return site{}, false, b.Method.Errorf(n.Offset, "invokedynamic: bootstrap method %d of %d", c.A, len(bsms))
	}
	h, err := b.Pool.Entry(bsms[c.A].MethodRef)
	if err != nil || h.Tag != classfile.TagMethodHandle {
		return site{}, false, b.Method.Errorf(n.Offset, "invokedynamic: bootstrap method is not a method handle")
	}
	owner, _, _, err := b.Pool.MemberRef(h.B)
	if err != nil {
		return fail(err)
	}
	md, err := classfile.ParseMethodDescriptor(desc)
	if err != nil {
		return fail(err)
	}
	ret, ok := classfile.ClassOfDescriptor(md.Return)
	if !ok {
		return site{}, false, nil
	}
	switch owner {
	case "java/lang/invoke/LambdaMetafactory":
		if len(md.Args) == 0 {
			return site{}, false, nil
		}
		return site{at: n, kind: kindLambda, typ: classfile.JavaName(ret), off: n.Offset}, true, nil
	case "java/lang/invoke/StringConcatFactory":
		return site{at: n, kind: kindConcat, typ: "java.lang.String", off: n.Offset}, true, nil
	}
	return site{}, false, nil
}

func (cc *countClass) bootstrapMethods(cf *classfile.Class) ([]classfile.BootstrapMethod, error) {
	if !cc.parsed {
		cc.parsed = true
		m := code.Method{Class: cf.Name()}
		a := classfile.FindAttribute(cf.Attributes, "BootstrapMethods", cf.Pool)
		if a == nil {
			cc.bsmErr = m.Errorf(-1, "invokedynamic without a BootstrapMethods attribute")
		} else if cc.bsms, cc.bsmErr = classfile.ParseBootstrapMethods(a); cc.bsmErr != nil {
			cc.bsmErr = m.Errorf(-1, "BootstrapMethods: %w", cc.bsmErr)
		}
	}
	return cc.bsms, cc.bsmErr
}
