package passes

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
)

// shape is what retransformation forbids a class to change (the agent's --jdk): flags,
// super class, interfaces, and every field and method with its flags, in order.
func shape(t *testing.T, name string, data []byte) string {
	t.Helper()
	cf, err := classfile.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%#x %d %v\n", cf.AccessFlags, cf.SuperClass, cf.InterfaceNames())
	for _, m := range cf.Fields {
		fmt.Fprintf(&b, "field %#x %s %s\n", m.AccessFlags, m.Name(cf.Pool), m.Descriptor(cf.Pool))
	}
	for _, m := range cf.Methods {
		fmt.Fprintf(&b, "method %#x %s %s\n", m.AccessFlags, m.Name(cf.Pool), m.Descriptor(cf.Pool))
	}
	return b.String()
}

// TestCountKeepsClassShape: the count pass changes method bodies, locals and the constant pool
// only, never the members or hierarchy of a class, so the JVM can retransform what it rewrote
// (JDK classes under --jdk, and every class under attach). Unaccounted classes (as JDK classes
// are), switched accounts and every class accounted are all checked.
func TestCountKeepsClassShape(t *testing.T) {
	for _, patterns := range []string{"", "org.apache.commons.lang3.*,org.eclipse.jdt.internal.compiler.*", "*"} {
		var set *accounts.Set
		if patterns != "" {
			var err error
			if set, err = accounts.Parse(patterns); err != nil {
				t.Fatal(err)
			}
		}
		pass, err := Count(CountOptions{Accounts: set, Table: accounts.NewTable(set)})
		if err != nil {
			t.Fatal(err)
		}
		changed := 0
		for _, jar := range []string{"commons-lang3.jar", "eclipse-ecj.jar"} {
			for _, c := range jarClasses(t, jar) {
				res, err := pass.TransformClass(c.name, c.data)
				if err != nil || res.Data == nil {
					continue
				}
				changed++
				if a, b := shape(t, c.name, c.data), shape(t, c.name, res.Data); a != b {
					t.Errorf("accounts %q: %s!%s: the count pass changed the class's shape:\n%s\nto\n%s", patterns, jar, c.name, a, b)
				}
			}
		}
		if changed < 500 {
			t.Errorf("accounts %q: only %d classes rewritten", patterns, changed)
		}
		t.Logf("accounts %q: %d classes rewritten, shapes unchanged", patterns, changed)
	}
}
