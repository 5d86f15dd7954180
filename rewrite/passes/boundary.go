package passes

import (
	"github.com/heapledger/heapledger/rewrite/classfile"
)

// Account boundaries (issue 35). A method of an accounted class switches the thread's account
// to its class's so that the unaccounted code it calls charges what it allocates to it: by
// definition 3 of the accounting paper an allocation belongs to the closest accounted module
// on the stack. Its own sites need no switch: they charge its class's account directly, as
// with '*'. The switch changes nothing when every caller of the method already runs in that
// account, which the rewriter can tell, from the class alone, for one kind of method:
//
//  1. it is private, so only its own class calls it (noNest: no nest member can);
//  2. no method handle constant of its class names it (a lambda or method reference body,
//     which other accounts' code invokes through the functional interface);
//  3. it has no runtime-visible annotation (frameworks call annotated private methods, such
//     as @PostConstruct or event handlers, by reflection from their own code);
//  4. serialization does not call it (readObject, writeObject, readObjectNoData,
//     readResolve, writeReplace, which java.io calls reflectively).
//
// Its callers then are methods of the same class, each running in the class's account: a
// method that switched to it, or one entered the same way. Constructors keep their switch:
// frameworks construct objects through private constructors by reflection. What stays
// inexact is documented in docs/instrumentation.md ("Account boundaries"): a private method
// called by reflection from another account without an annotation, or from a method of its
// class that could not be rewritten, runs in its caller's account, as every method of an
// unaccounted class does.

// innerMethods are the methods of a class that need no account switch (sameAccountOnly),
// found once per class: its method handle targets and whether it belongs to a nest.
type innerMethods struct {
	nest    bool
	handled map[string]bool // name+descriptor of the class's own methods a handle names
}

// serializationHooks are the private methods java.io's serialization calls by reflection.
var serializationHooks = map[string]bool{
	"readObject(Ljava/io/ObjectInputStream;)V":   true,
	"writeObject(Ljava/io/ObjectOutputStream;)V": true,
	"readObjectNoData()V":                        true,
	"readResolve()Ljava/lang/Object;":            true,
	"writeReplace()Ljava/lang/Object;":           true,
}

// findInnerMethods scans cf's attributes and constant pool once for what sameAccountOnly
// needs to know.
func findInnerMethods(cf *classfile.Class) *innerMethods {
	im := &innerMethods{handled: map[string]bool{}}
	im.nest = classfile.FindAttribute(cf.Attributes, "NestHost", cf.Pool) != nil ||
		classfile.FindAttribute(cf.Attributes, "NestMembers", cf.Pool) != nil
	self := cf.Name()
	for i := 1; i < cf.Pool.Len(); i++ {
		c := &cf.Pool.Entries[i]
		if c.Tag != classfile.TagMethodHandle {
			continue
		}
		owner, name, desc, err := cf.Pool.MemberRef(c.B)
		if err == nil && owner == self {
			im.handled[name+desc] = true
		}
	}
	return im
}

// sameAccountOnly reports whether every caller of m runs in its class's account already, so
// that switching to it on entry would change nothing (the rules above).
func (im *innerMethods) sameAccountOnly(cf *classfile.Class, m *classfile.Member) bool {
	if m.AccessFlags&classfile.AccPrivate == 0 || im.nest {
		return false
	}
	name, desc := m.Name(cf.Pool), m.Descriptor(cf.Pool)
	if name == "<init>" || name == "<clinit>" || im.handled[name+desc] || serializationHooks[name+desc] {
		return false
	}
	for _, a := range []string{"RuntimeVisibleAnnotations", "RuntimeVisibleParameterAnnotations", "RuntimeVisibleTypeAnnotations"} {
		if classfile.FindAttribute(m.Attributes, a, cf.Pool) != nil {
			return false
		}
	}
	return true
}
