package rt

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/classfile"
)

// HotSpot's C2 inlines a call whose site ran at least ~100 times when the callee has at most
// FreqInlineSize (325) bytes of bytecode. The counting fast paths are inlined at every allocation
// site of the program, so every byte of theirs is charged to the inlining budget of the program's
// methods; their shared slow path must stay out of line (above the limit), or a profile taken
// while every site's first allocation goes slow would inline it everywhere.
const freqInlineSize = 325

// TestRuntimeSizes guards those sizes: the fast paths stay small, the slow path stays above the
// limit.
func TestRuntimeSizes(t *testing.T) {
	classes := build(t)
	data, err := os.ReadFile(filepath.Join(classes, "heapledger", "rt", "Acct.class"))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := classfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int{}
	for _, m := range cf.Methods {
		code, _, err := cf.MethodCode(m)
		if err != nil {
			t.Fatal(err)
		}
		if code != nil {
			sizes[m.Name(cf.Pool)+m.Descriptor(cf.Pool)] = len(code.Bytecode)
		}
	}
	// Fast paths: the '*' forms, the full-switching forms and the account-neutral forms (own),
	// objects and arrays. The array
	// forms carry the calling contexts' call (Context.array, issue 30) behind a static final
	// switch, 14 bytes more than before.
	fast := map[string]int{
		"object(Ljava/lang/Object;Lheapledger/rt/Acct;II)Lheapledger/rt/Acct;": 180,
		"one(Ljava/lang/Object;Lheapledger/rt/Acct;IIII)Lheapledger/rt/Acct;":  210,
		"object(Ljava/lang/Object;Lheapledger/rt/Acct;I)V":                     20,
		"fast(Ljava/lang/Object;Lheapledger/rt/Acct;IIII)V":                    190,
		"count(Ljava/lang/Object;Lheapledger/rt/Acct;II)V":                     160,
		"own(Ljava/lang/Object;Lheapledger/rt/Acct;II)V":                       160,
		"ownArray(Ljava/lang/Object;Lheapledger/rt/Acct;IIII)V":                190,
	}
	for m, most := range fast {
		n, ok := sizes[m]
		if !ok {
			t.Errorf("Acct.%s not found", m)
		} else if n > most {
			t.Errorf("fast path Acct.%s has %d bytes of bytecode, want at most %d", m, n, most)
		}
	}
	slow := "slow(Ljava/lang/Object;Ljava/lang/Class;Lheapledger/rt/Acct;IIII)Lheapledger/rt/Acct;"
	if n, ok := sizes[slow]; !ok {
		t.Errorf("Acct.%s not found", slow)
	} else if n <= freqInlineSize {
		t.Errorf("slow path Acct.%s has %d bytes of bytecode; it must stay above FreqInlineSize (%d) so the JIT never inlines it", slow, n, freqInlineSize)
	}
	data, err = os.ReadFile(filepath.Join(classes, "heapledger", "rt", "Ledger.class"))
	if err != nil {
		t.Fatal(err)
	}
	if cf, err = classfile.Parse(data); err != nil {
		t.Fatal(err)
	}
	for _, m := range cf.Methods {
		if m.Name(cf.Pool) == "current" {
			code, _, err := cf.MethodCode(m)
			if err != nil {
				t.Fatal(err)
			}
			if len(code.Bytecode) > 50 {
				t.Errorf("Ledger.current has %d bytes of bytecode, want at most 50", len(code.Bytecode))
			}
		}
	}
}

// TestSizeModelMatchesVM: the runtime's shallow sizes against the VM's own layout (Unsafe's
// field offsets and array bases, read by the test itself), for JDK and hand-made classes with
// gaps, under the layouts HotSpot offers. On JDK 17 the runtime reads the layout through Unsafe;
// on JDK 25, whose Unsafe warns on the program's stderr at the first such call, it must not
// touch Unsafe, and takes the layout from the JVM's options and HotSpot's field layout rule.
func TestSizeModelMatchesVM(t *testing.T) {
	classes := build(t)
	java17 := need(t, "java")
	java25 := testenv.Tool(t, filepath.Join(fixtures.JDK25Home(), "bin", "java"))
	shapes := []string{"java.lang.String", "java.lang.Integer", "java.lang.Long", "java.util.HashMap", "java.util.HashMap$Node",
		"java.util.ArrayList", "java.util.concurrent.ConcurrentHashMap", "java.lang.ref.WeakReference", "java.util.TreeMap$Entry",
		"java.math.BigInteger", "java.lang.StringBuilder", "java.util.LinkedHashMap$Entry", "java.io.File", "java.util.Date",
		"java.net.URI", "java.util.concurrent.ThreadPoolExecutor", "java.lang.Throwable"}
	for _, own := range []string{"OnlyLong", "ByteLong", "Sub", "SubSub", "Mixed", "Refs", "Empty", "Bytes", "OneInt"} {
		shapes = append(shapes, "heapledger.rt.SelfTest$"+own)
	}
	for _, c := range []struct {
		name, java, source string
		env, opts          []string
	}{
		{"jdk17", java17, "unsafe", nil, nil},
		{"jdk17-uncompressed", java17, "unsafe", nil, []string{"-XX:-UseCompressedOops"}},
		{"jdk25", java25, "options", nil, nil},
		{"jdk25-uncompressed", java25, "options", nil, []string{"-XX:-UseCompressedOops"}},
		{"jdk25-compact", java25, "options", nil, []string{"-XX:+UseCompactObjectHeaders"}},
		{"jdk25-compact-uncompressed", java25, "options", nil, []string{"-XX:-UseCompressedOops", "-XX:+UseCompactObjectHeaders"}},
		{"jdk25-compact-by-env", java25, "options", []string{"JAVA_TOOL_OPTIONS=-XX:+UseCompactObjectHeaders"}, nil},
		{"jdk25-compact-then-off", java25, "options", []string{"JAVA_TOOL_OPTIONS=-XX:+UseCompactObjectHeaders"}, []string{"-XX:-UseCompactObjectHeaders"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{}, c.opts...), "-cp", classes, "heapledger.rt.SelfTest", "sizes")
			cmd := exec.Command(c.java, append(args, shapes...)...)
			cmd.Env = append(os.Environ(), c.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s%s", err, out, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			model, vm := strings.Fields(lines[0]), strings.Fields(lines[1])
			if len(model) != 8 || len(vm) != 7 || model[0] != "model" || vm[0] != "vm" {
				t.Fatalf("output:\n%s", out)
			}
			if !slices.Equal(model[1:7], vm[1:7]) || model[7] != c.source {
				t.Errorf("header, reference and array sizes %v from %s; the VM's %v, want them from %s", model[1:7], model[7], vm[1:7], c.source)
			}
			if len(lines)-2 != len(shapes) {
				t.Fatalf("%d classes sized, want %d:\n%s", len(lines)-2, len(shapes), out)
			}
			for _, l := range lines[2:] {
				if f := strings.Fields(l); len(f) != 3 || f[1] != f[2] {
					t.Errorf("%s: the rule's size, then the VM's: %s", c.name, l)
				}
			}
		})
	}
	// Counting arrays and objects on JDK 25 leaves the program's stderr as it was.
	out, err := exec.Command(java25, "-cp", classes, "heapledger.rt.SelfTest", "figure3").CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("sun.misc.Unsafe")) || bytes.Contains(out, []byte("WARNING")) {
		t.Errorf("JDK 25: %v\n%s", err, out)
	}
}
