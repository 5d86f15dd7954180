package passes

import (
	"fmt"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/commons"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// ObjectClass is the one class the Object.<init> hook rewrites.
const ObjectClass = "java/lang/Object"

// ObjectHookOwner and ObjectHookMethod name the runtime method java.lang.Object's constructor
// calls once hooked: heapledger.rt.ObjectHook.constructed(Object).
const (
	ObjectHookOwner  = "heapledger/rt/ObjectHook"
	ObjectHookMethod = "constructed"
	objectHookDesc   = "(Ljava/lang/Object;)V"
)

// ObjectInitHook returns the pass that hooks java.lang.Object's constructor: its first
// instructions become `aload_0; invokestatic heapledger/rt/ObjectHook.constructed(Object)`, so
// every object whose constructor chain runs — including those made by reflection, JNI's
// NewObject, deserialization and JDK code no rewritten site sees — is reported to the runtime
// (the paper "Aggregated accounting of memory usage in Java", section 5: the constructor of
// java.lang.Object "is called for all created Java objects", arrays and Class objects excepted).
//
// It is applied by retransformation, which allows body changes only: the call adds two
// constants and one operand-stack slot, no field or method. Every other class is refused, so a
// caller routing the wrong class gets an error rather than a silently hooked class. The hook's
// reentrancy guard and its rule against double counting are the runtime's (ObjectHook.java,
// docs/agent.md).
func ObjectInitHook() transform.Class {
	return &driver{name: "object-init", ed: objectHookEditor{}}
}

type objectHookEditor struct{}

func (objectHookEditor) prepareClass(c *classfile.Class) (any, error) {
	if n := c.Name(); n != ObjectClass {
		return nil, fmt.Errorf("the object-init hook rewrites only %s, not %s", ObjectClass, n)
	}
	return nil, nil
}

func (objectHookEditor) editMethod(c *classfile.Class, m *classfile.Member, cm *commons.Method, _ any) error {
	b := cm.Body
	if !m.Is(c.Pool, "<init>", "()V") {
		return nil
	}
	// At the start, before any label: Object.<init> has no super() call, so `this` is an
	// initialised reference from the first instruction on (JVMS 4.10.1.6), and a call there
	// needs no new stack map frame.
	return b.InsertAfter(nil, b.Seq().Load(code.ALOAD, 0).InvokeStatic(ObjectHookOwner, ObjectHookMethod, objectHookDesc))
}

// WithObjectInitHook routes java.lang.Object to the Object.<init> hook and every other class to
// pass: the agent's --object-init sends Object through the same service as the classes it
// counts.
func WithObjectInitHook(pass transform.Class) transform.Class {
	hook := ObjectInitHook()
	return transform.Func(func(name string, data []byte) (transform.Result, error) {
		if name == ObjectClass {
			return hook.TransformClass(name, data)
		}
		return pass.TransformClass(name, data)
	})
}
