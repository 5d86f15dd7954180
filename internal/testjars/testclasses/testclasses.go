// Package testclasses hands tests the parsed classes of the Debian jars that testjars reads. It
// is apart from testjars because the class-file parser's own tests use testjars.
package testclasses

import (
	"testing"

	"github.com/heapledger/heapledger/internal/testjars"
	"github.com/heapledger/heapledger/rewrite/classfile"
)

// Each calls fn with every parsed class of a jar (a name in testjars.Dir or a path), in jar
// order, module-info left out. A missing jar skips the test outside CI and fails it in CI; a
// class that does not parse fails it.
func Each(t testing.TB, jar string, fn func(entry string, c *classfile.Class)) {
	t.Helper()
	testjars.Each(t, jar, func(entry string, data []byte) {
		if testjars.IsModuleInfo(entry) {
			return
		}
		c, err := classfile.Parse(data)
		if err != nil {
			t.Fatalf("%s!%s: %v", jar, entry, err)
		}
		fn(entry, c)
	})
}
