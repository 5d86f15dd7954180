package passes

import (
	"encoding/binary"
	"strings"
	"sync"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// Account-neutral methods (issue 35). A switching method sets the thread's account for one
// reason: code it runs that charges the thread's account — unaccounted rewritten code, and the
// methods that keep their caller's account (boundary.go) — must charge the method's. A method
// with no allocation site of its own none of whose instructions can run such code is
// account-neutral: whatever the thread's account, it charges the same, so it needs no switch
// and no handler, whoever calls it — a public method, a constructor, one called by reflection
// alike. What it may run:
//
//  1. methods of accounted classes of the input, resolved exactly (invokestatic, invokespecial,
//     or a virtual call whose target cannot be overridden: a private or final method, or a
//     final class), that are not private (those may keep their caller's account) and, for a
//     constructor, run nothing before super() (where it charges its caller's account): they
//     switch, or are account-neutral themselves. A private method of its own class counts
//     when it switches or is account-neutral (neutralMethods, step 2);
//  2. methods of unaccounted classes of the input, resolved exactly, that neither allocate nor
//     call (the count pass leaves them alone);
//  3. a few JDK methods that call no code of the program and allocate nothing (jdkLeaf);
//  4. class initialisation (getstatic, putstatic, invokestatic) of classes of the JDK, or of the
//     input whose every class and interface initialised with it is accounted or has no static
//     initialiser (initNeutral);
//  5. its own allocation sites: objects (whose constructor call is rule 1's and whose class's
//     initialisation rule 4's) and one-dimensional arrays. Their calls, Acct.own, charge the
//     class's account and leave the thread's as the caller left it; the calls of a '*' method
//     (and of path counters and calling contexts, which keep rule 5 out) set the thread's
//     account, which would then outlive the method. Multi-dimensional arrays, lambdas,
//     clones and reflective allocations keep the switch.
//
// Anything else — a virtual call that a class outside the input may override, a JDK method that
// takes an object of the program, a class not in the input — makes the method keep its switch:
// a class outside the input may be rewritten apart and charge the thread's account. The input
// is read through transform.Inputs; under the agent it is the JVM's class path, for the classes
// its system loader defines (jar.ClassPath), and without one no method is found
// account-neutral. With the Object.<init> hook (ObjectInit), which charges the
// thread's account, none is either. The JDK's own code is assumed not rewritten (only the
// agent's --jdk rewrites it, and it finds none neutral); what stays inexact is in
// docs/instrumentation.md, "Account-neutral methods".

// inputClass is what neutralMethods needs to know of a class of the input, read once per pass.
type inputClass struct {
	in         bool // the class is in the input
	accounted  bool
	final      bool
	super      string
	interfaces []string
	clinit     bool
	methods    map[string]inputMethod // name+descriptor
	initOnce   sync.Once
	initOK     bool
}

type inputMethod struct {
	flags uint16
	leaf  bool // neither allocates nor calls (skip rule 1)
	// preInit: a constructor that may allocate or call before its super() or this(), where the
	// count pass charges the caller's account, which is the thread's.
	preInit bool
}

// inputClassOf reads class name from the input once for the whole pass.
func (e *countEditor) inputClassOf(name string) *inputClass {
	if v, ok := e.classes.Load(name); ok {
		return v.(*inputClass)
	}
	return e.remember(name, readInput(e.inputs, name))
}

// classOf is inputClassOf for the class the pass is preparing, already parsed: it is not read
// and parsed a second time.
func (e *countEditor) classOf(cf *classfile.Class) *inputClass {
	if v, ok := e.classes.Load(cf.Name()); ok {
		return v.(*inputClass)
	}
	return e.remember(cf.Name(), cf)
}

// remember keeps what neutralMethods needs of class name, parsed as cf (nil: not in the input).
func (e *countEditor) remember(name string, cf *classfile.Class) *inputClass {
	ic := &inputClass{}
	if cf != nil {
		ic.in = true
		ic.accounted = e.accountOf(name) != accounts.Unaccounted
		ic.final = cf.AccessFlags&classfile.AccFinal != 0
		ic.super, ic.interfaces = cf.SuperName(), cf.InterfaceNames()
		ic.methods = map[string]inputMethod{}
		for _, m := range cf.Methods {
			n, d := m.Name(cf.Pool), m.Descriptor(cf.Pool)
			ic.methods[n+d] = scanMethod(cf, m, n == "<init>")
			ic.clinit = ic.clinit || n == "<clinit>"
		}
	}
	v, _ := e.classes.LoadOrStore(name, ic)
	return v.(*inputClass)
}

// scanMethod reads what callers need to know of m. A method whose code cannot be read is no
// leaf, and a constructor then may do anything before super().
func scanMethod(cf *classfile.Class, m *classfile.Member, ctor bool) inputMethod {
	im := inputMethod{flags: m.AccessFlags, preInit: ctor}
	c, _, err := cf.MethodCode(m)
	if err != nil || c == nil {
		return im
	}
	// The last super() or this() call in code order is at or after the one each path takes, so
	// an allocation or call before it may run before super().
	first, last := -1, -1
	bc := c.Bytecode
	err = code.Scan(bc, func(pc int, op code.Opcode) bool {
		switch op {
		case code.INVOKESPECIAL:
			if owner, name, _, err := cf.Pool.MemberRef(binary.BigEndian.Uint16(bc[pc+1:])); err == nil && name == "<init>" &&
				(owner == cf.Name() || owner == cf.SuperName()) {
				last = pc
			}
			fallthrough
		case code.INVOKEVIRTUAL, code.INVOKESTATIC, code.INVOKEINTERFACE, code.INVOKEDYNAMIC,
			code.NEW, code.NEWARRAY, code.ANEWARRAY, code.MULTIANEWARRAY:
			if first < 0 {
				first = pc
			}
		}
		return true
	})
	if err != nil {
		return im
	}
	im.leaf = first < 0
	if ctor {
		im.preInit = last < 0 || first < last
	}
	return im
}

// jdkClass reports whether name is a class of the JDK, which offline rewriting never changes:
// one under the JDK's own prefixes, or of a package of the JDK's boot layer outside them
// (jdkPackages). The application class loader hands a class of such a package to the JDK
// whatever jar of the class path holds it too (xml-apis' org.w3c.dom, for one), so that jar's
// copy, read as an input, is not the class that runs. Names under the prefixes that the JDK
// no longer has (javax.inject's, say) count as the JDK's too, which only keeps switches.
func jdkClass(name string) bool {
	for _, p := range []string{"java/", "javax/", "jdk/", "sun/", "com/sun/", "org/omg/"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	i := strings.LastIndexByte(name, '/')
	return i > 0 && jdkPackages[name[:i]]
}

// jdkPackages are the packages of the JDK's default boot layer outside jdkClass's prefixes, the
// same in JDK 17 and 25 (ModuleLayer.boot(), listed once; Java 8's rt.jar has them too, and
// CORBA's org.omg, a prefix above).
var jdkPackages = map[string]bool{
	"netscape/javascript":           true, // jdk.jsobject
	"org/ietf/jgss":                 true, // java.security.jgss
	"org/jcp/xml/dsig/internal":     true, // java.xml.crypto
	"org/jcp/xml/dsig/internal/dom": true,
	"org/w3c/dom":                   true, // java.xml
	"org/w3c/dom/bootstrap":         true,
	"org/w3c/dom/events":            true,
	"org/w3c/dom/ls":                true,
	"org/w3c/dom/ranges":            true,
	"org/w3c/dom/traversal":         true,
	"org/w3c/dom/views":             true,
	"org/xml/sax":                   true,
	"org/xml/sax/ext":               true,
	"org/xml/sax/helpers":           true,
	"org/w3c/dom/css":               true, // jdk.xml.dom
	"org/w3c/dom/html":              true,
	"org/w3c/dom/stylesheets":       true,
	"org/w3c/dom/xpath":             true,
}

// jdkLeaf reports whether the JDK method calls no code of the program and allocates nothing:
// Object's constructor and getClass, System's array copy and clocks, Math and StrictMath, and the
// primitive wrappers' static methods on primitives alone.
func jdkLeaf(owner, name, desc string) bool {
	switch owner {
	case "java/lang/Object":
		return name == "<init>" || name == "getClass"
	case "java/lang/System":
		return name == "arraycopy" || name == "nanoTime" || name == "currentTimeMillis" || name == "identityHashCode"
	case "java/lang/Math", "java/lang/StrictMath":
		return true
	case "java/lang/Integer", "java/lang/Long", "java/lang/Float", "java/lang/Double", "java/lang/Short",
		"java/lang/Byte", "java/lang/Character", "java/lang/Boolean":
		return !strings.ContainsAny(desc, "L[") && name != "<init>"
	}
	return false
}

// jdkFinal reports whether owner is one of the final JDK classes whose methods run code of the
// program only through their arguments: String, StringBuilder and Character.
func jdkFinal(owner string) bool {
	return owner == "java/lang/String" || owner == "java/lang/StringBuilder" || owner == "java/lang/Character"
}

// plainParams reports whether a method of a jdkFinal class with descriptor desc takes nothing
// through which it could run code of the program: its parameters are primitives, arrays of
// primitives or strings, never an Object, CharSequence or array of references, whose
// toString, charAt or equals the program may override. A String method that encodes or
// decodes bytes is left out too: naming a charset may load a provider of the program through
// the service loader.
func plainParams(owner, desc string) bool {
	end := strings.IndexByte(desc, ')')
	if !strings.HasPrefix(desc, "(") || end < 0 || owner == "java/lang/String" && strings.Contains(desc, "[B") {
		return false
	}
	params := desc[1:end]
	for params != "" {
		switch {
		case strings.HasPrefix(params, "Ljava/lang/String;"):
			params = params[len("Ljava/lang/String;"):]
		case len(params) >= 2 && params[0] == '[' && strings.IndexByte("ZBCSIJFD", params[1]) >= 0:
			params = params[2:]
		case strings.IndexByte("ZBCSIJFD", params[0]) >= 0:
			params = params[1:]
		default:
			return false
		}
	}
	return true
}

// initNeutral reports whether initialising class name runs only code that keeps its own account
// (rule 4): every class and interface initialised with it is of the JDK, or of the input and
// accounted or without a static initialiser.
func (e *countEditor) initNeutral(name string) bool {
	ic := e.inputClassOf(name)
	if jdkClass(name) && !ic.in {
		return true // a class of the input is rewritten, whatever its package (javax.inject's, say)
	}
	if !ic.in {
		return false
	}
	ic.initOnce.Do(func() {
		ic.initOK = ic.accounted || !ic.clinit
		for _, s := range append([]string{ic.super}, ic.interfaces...) {
			if ic.initOK && s != "" {
				ic.initOK = e.initNeutral(s)
			}
		}
	})
	return ic.initOK
}

// neutralMethods finds the account-neutral methods of cf (the rules above), or nil when none
// can be. inner tells which private methods keep their caller's account.
func (e *countEditor) neutralMethods(cf *classfile.Class, inner *innerMethods) map[*classfile.Member]bool {
	if e.inputs == nil || e.opt.ObjectInit {
		return nil
	}
	self := e.classOf(cf)
	// 1. What each method runs: the private methods of cf it depends on, or a rule it breaks.
	deps := map[*classfile.Member][]*classfile.Member{}
	for _, m := range cf.Methods {
		if self.methods[m.Name(cf.Pool)+m.Descriptor(cf.Pool)].preInit {
			continue // its sites before super() charge its caller's account, the thread's
		}
		if d, ok := e.methodDeps(cf, self, m); ok {
			deps[m] = d
		}
	}
	// 2. A method that depends on a private method of cf that keeps its caller's account and
	// is not account-neutral is not either: drop such methods until none is left to drop.
	for changed := true; changed; {
		changed = false
		for m, d := range deps {
			for _, p := range d {
				if _, ok := deps[p]; !ok && inner.sameAccountOnly(cf, p) {
					delete(deps, m)
					changed = true
					break
				}
			}
		}
	}
	out := map[*classfile.Member]bool{}
	for m := range deps {
		out[m] = true
	}
	return out
}

// methodDeps reads m's code: ok is false when an instruction may run code that charges the
// thread's account (the rules above), and deps are the private methods of cf it calls.
func (e *countEditor) methodDeps(cf *classfile.Class, self *inputClass, m *classfile.Member) (deps []*classfile.Member, ok bool) {
	c, _, err := cf.MethodCode(m)
	if err != nil || c == nil {
		return nil, false
	}
	ok = true
	bc := c.Bytecode
	err = code.Scan(bc, func(pc int, op code.Opcode) bool {
		switch op {
		case code.INVOKEVIRTUAL, code.INVOKESPECIAL, code.INVOKESTATIC, code.INVOKEINTERFACE:
			owner, name, desc, err := cf.Pool.MemberRef(binary.BigEndian.Uint16(bc[pc+1:]))
			if err != nil {
				ok = false
			} else if owner == cf.Name() && self.methods[name+desc].flags&classfile.AccPrivate != 0 {
				deps = append(deps, cf.Method(name, desc))
			} else {
				// clone and newInstance calls are sites (findSites).
				ok = name != "clone" && name != "newInstance" && e.callNeutral(op, owner, name, desc)
			}
		case code.GETSTATIC, code.PUTSTATIC:
			owner, _, _, err := cf.Pool.MemberRef(binary.BigEndian.Uint16(bc[pc+1:]))
			ok = err == nil && (owner == cf.Name() || e.initNeutral(owner))
		case code.NEW:
			// A site, counted by Acct.own (rule 5); making the object initialises its class.
			owner, err := cf.Pool.ClassName(binary.BigEndian.Uint16(bc[pc+1:]))
			ok = e.ownSites() && err == nil && (owner == cf.Name() || e.initNeutral(owner))
		case code.NEWARRAY, code.ANEWARRAY:
			ok = e.ownSites() // a site, counted by Acct.own (rule 5)
		case code.MULTIANEWARRAY, code.INVOKEDYNAMIC:
			ok = false // a site the runtime counts with the thread's account (or a bootstrap running any code)
		case code.LDC, code.LDC_W, code.LDC2_W:
			i := uint16(bc[pc+1])
			if op != code.LDC {
				i = binary.BigEndian.Uint16(bc[pc+1:])
			}
			k, err := cf.Pool.Entry(i)
			ok = err == nil && k.Tag != classfile.TagDynamic // a dynamic constant runs its bootstrap
		}
		return ok
	})
	return deps, ok && err == nil
}

// ownSites reports whether allocation sites may leave a method account-neutral (rule 5): their
// calls, Acct.own, charge the class's account and leave the thread's alone. Path counters and
// calling contexts count with calls that set the thread's account, so there they may not.
func (e *countEditor) ownSites() bool {
	return !e.opt.Paths && !e.opt.Contexts
}

// callNeutral reports whether a call to owner.name+desc by op runs only code that keeps its own
// account (rules 1 to 3, and 4 for the class a static call initialises).
func (e *countEditor) callNeutral(op code.Opcode, owner, name, desc string) bool {
	if strings.HasPrefix(owner, "[") {
		return true // an array's clone
	}
	// Resolution: the class that declares the method, from owner up its superclasses.
	for at := owner; at != ""; {
		if jdkClass(at) {
			if jdkFinal(at) {
				return plainParams(at, desc) // every call exact
			}
			return jdkLeaf(at, name, desc) && (op == code.INVOKESTATIC || op == code.INVOKESPECIAL || name == "getClass")
		}
		ic := e.inputClassOf(at)
		if !ic.in {
			return false
		}
		m, found := ic.methods[name+desc]
		if !found {
			at = ic.super
			continue
		}
		if !exactCall(op, at == owner, e.inputClassOf(owner).final, m.flags) || op == code.INVOKESTATIC && !e.initNeutral(at) {
			return false
		}
		if ic.accounted {
			return m.flags&classfile.AccPrivate == 0 && !m.preInit
		}
		return m.leaf
	}
	return false
}

// exactCall reports whether a call by op resolves to the one method found: a static or special
// call, or a virtual one to a private or final method or through a final class.
func exactCall(op code.Opcode, declaredByOwner, ownerFinal bool, flags uint16) bool {
	switch op {
	case code.INVOKESTATIC, code.INVOKESPECIAL:
		return true
	case code.INVOKEVIRTUAL:
		return ownerFinal || flags&(classfile.AccPrivate|classfile.AccFinal) != 0
	}
	return flags&classfile.AccPrivate != 0 && declaredByOwner // invokeinterface of a private method (JDK 11)
}
