package passes

import (
	"sync"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// Account boundaries (issue 35). A method of an accounted class switches the thread's account
// to its class's so that the unaccounted code it calls charges what it allocates to it: by
// definition 3 of the accounting paper an allocation belongs to the closest accounted module
// on the stack. Its own sites need no switch: they charge its class's account directly, as
// with '*'. The switch changes nothing when every caller of the method already runs in that
// account, which the rewriter can tell for one kind of method:
//
//  1. it is private, so only its own class calls it, and the other members of its nest
//     (JVMS 5.4.4), which share its package and so its account;
//  2. no method handle constant names it, in its class or another member of its nest (a
//     lambda's body or a method reference, which other accounts' code invokes through the
//     functional interface). A nest's members are read from the input (nestHandles); where
//     they cannot be (under the agent, a class no class path holds: jar.ClassPath), the
//     methods of a class in a nest keep their switch;
//  3. it has no runtime-visible annotation (frameworks call annotated private methods, such
//     as @PostConstruct or event handlers, by reflection from their own code);
//  4. serialization does not call it (readObject, writeObject, readObjectNoData,
//     readResolve, writeReplace, which java.io calls reflectively).
//
// Its callers then are methods of its nest, each running in the class's account: a method
// that switched to it, or one entered the same way. Constructors keep their switch:
// frameworks construct objects through private constructors by reflection. What stays
// inexact is documented in docs/instrumentation.md ("Account boundaries"): a private method
// called by reflection from another account without an annotation, or from a method of its
// nest that could not be rewritten, runs in its caller's account, as every method of an
// unaccounted class does.

// innerMethods are the methods of a class that need no account switch (sameAccountOnly),
// found once per class.
type innerMethods struct {
	// handled holds "owner.name+descriptor" of the private methods a method handle names in
	// the class's nest (or in the class alone, outside a nest); known is false when a member
	// of its nest could not be read, and then no method of the class leaves out its switch.
	handled map[string]bool
	known   bool
}

// serializationHooks are the private methods java.io's serialization calls by reflection.
var serializationHooks = map[string]bool{
	"readObject(Ljava/io/ObjectInputStream;)V":   true,
	"writeObject(Ljava/io/ObjectOutputStream;)V": true,
	"readObjectNoData()V":                        true,
	"readResolve()Ljava/lang/Object;":            true,
	"writeReplace()Ljava/lang/Object;":           true,
}

// findInnerMethods finds what sameAccountOnly needs to know of cf: the method handles of cf
// alone, or of its whole nest.
func (e *countEditor) findInnerMethods(cf *classfile.Class) *innerMethods {
	host := ""
	if a := classfile.FindAttribute(cf.Attributes, "NestHost", cf.Pool); a != nil {
		i, err := classfile.ParseIndex(a)
		if err != nil {
			return &innerMethods{}
		}
		if host, err = cf.Pool.ClassName(i); err != nil {
			return &innerMethods{}
		}
	} else if classfile.FindAttribute(cf.Attributes, "NestMembers", cf.Pool) != nil {
		host = cf.Name()
	}
	if host == "" {
		handled := map[string]bool{}
		addHandles(cf, map[string]bool{cf.Name(): true}, handled)
		return &innerMethods{handled: handled, known: true}
	}
	n := e.nestHandles(host)
	return &innerMethods{handled: n.handled, known: n.known}
}

// nestScan is the method handles of one nest, found once by whichever of its classes asks
// first.
type nestScan struct {
	once    sync.Once
	handled map[string]bool
	known   bool
}

// nestHandles reads the nest that host hosts from the input: the host, then each member its
// NestMembers attribute lists, and the private methods their method handles name.
func (e *countEditor) nestHandles(host string) *nestScan {
	v, _ := e.nests.LoadOrStore(host, &nestScan{})
	n := v.(*nestScan)
	n.once.Do(func() {
		if e.inputs == nil {
			return
		}
		hcf := readInput(e.inputs, host)
		if hcf == nil {
			return
		}
		members := map[string]bool{host: true}
		classes := []*classfile.Class{hcf}
		if a := classfile.FindAttribute(hcf.Attributes, "NestMembers", hcf.Pool); a != nil {
			list, err := classfile.ParseIndexList(a)
			if err != nil {
				return
			}
			for _, i := range list {
				name, err := hcf.Pool.ClassName(i)
				m := readInput(e.inputs, name)
				if err != nil || m == nil {
					return
				}
				members[name] = true
				classes = append(classes, m)
			}
		}
		n.handled = map[string]bool{}
		for _, c := range classes {
			addHandles(c, members, n.handled)
		}
		n.known = true
	})
	return n
}

// readInput parses the input's class name, or returns nil when the input has none or it does
// not parse.
func readInput(inputs func(string) ([]byte, bool), name string) *classfile.Class {
	data, ok := inputs(name)
	if !ok {
		return nil
	}
	cf, err := classfile.Parse(data)
	if err != nil || cf.Name() != name {
		return nil
	}
	return cf
}

// addHandles adds to handled "owner.name+descriptor" of each method of the classes in owners
// that a method handle constant of cf names.
func addHandles(cf *classfile.Class, owners map[string]bool, handled map[string]bool) {
	for i := 1; i < cf.Pool.Len(); i++ {
		c := &cf.Pool.Entries[i]
		if c.Tag != classfile.TagMethodHandle {
			continue
		}
		owner, name, desc, err := cf.Pool.MemberRef(c.B)
		if err == nil && owners[owner] {
			handled[owner+"."+name+desc] = true
		}
	}
}

// sameAccountOnly reports whether every caller of m runs in its class's account already, so
// that switching to it on entry would change nothing (the rules above).
func (im *innerMethods) sameAccountOnly(cf *classfile.Class, m *classfile.Member) bool {
	if m.AccessFlags&classfile.AccPrivate == 0 || !im.known {
		return false
	}
	name, desc := m.Name(cf.Pool), m.Descriptor(cf.Pool)
	if name == "<init>" || name == "<clinit>" || im.handled[cf.Name()+"."+name+desc] || serializationHooks[name+desc] {
		return false
	}
	for _, a := range []string{"RuntimeVisibleAnnotations", "RuntimeVisibleParameterAnnotations", "RuntimeVisibleTypeAnnotations"} {
		if classfile.FindAttribute(m.Attributes, a, cf.Pool) != nil {
			return false
		}
	}
	return true
}

// countsSwitches reports whether the methods of cc's class switch accounts, or have the switch
// left out, and the pass counts both (CountOptions.CountSwitches).
func (e *countEditor) countsSwitches(cc *countClass) bool {
	return e.opt.CountSwitches && cc.account != accounts.Unaccounted && !e.allAccounted
}

// switchCount prepares the counting of the method's account switch (--count-increments): a
// method that switches counts each switch in its entry code (countClass.Enter); one whose
// switch was left out (leftOut) counts on entry that it ran without one. Together they say what
// switching cost and what leaving switches out saved, in one run. The method's ID goes in
// cc.switchID, which calling-context mode uses as its own (context.go, step 1).
func (e *countEditor) switchCount(cc *countClass, b *code.Body, switching, leftOut bool, lines *sourceLines) error {
	cc.switchID = 0
	if !e.opt.CountSwitches || !switching && !leftOut {
		return nil
	}
	id, err := cc.methodID(b, lines)
	if err != nil {
		return err
	}
	cc.switchID = id
	if switching {
		return nil
	}
	return b.InsertAfter(nil, b.Seq().Ldc(id).InvokeStatic(AcctClass, "leftOut", "(I)V"))
}
