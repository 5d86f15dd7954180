package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeJava writes a script named java that prints a line and writes a snapshot where the agent
// option says, as the real JVM with the agent would: `heapledger run` can be tested without a
// JDK. The agent jar it is given need not exist beyond a file.
func fakeJava(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.jar")
	if err := os.WriteFile(agent, []byte("PK"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HEAPLEDGER_AGENT", agent)
	java := filepath.Join(dir, "java")
	script := `#!/bin/sh
for a; do case "$a" in -Dheapledger.snapshot.dir=*) d="${a#*=}";; esac; done
mkdir -p "$d"
printf 'program output\n'
printf '# heapledger snapshot 2\nreason\texit\nprogram\tFake\npid\t%s\naccount\t1\tcom.acme\n' $$ > "$d/heapledger-Fake-$$-1.snapshot"
printf 'site\t1\tobject\tcom.acme.Thing\tcom.acme.Main.main([Ljava/lang/String;)V\t0\t3\n' >> "$d/heapledger-Fake-$$-1.snapshot"
printf 'alloc\t1\t1\t0\t5\t0\t80\t-\t-\t-\t-\t-\t-\nend\n' >> "$d/heapledger-Fake-$$-1.snapshot"
`
	if err := os.WriteFile(java, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return java
}

// The report of `run --report` goes to stderr with everything else heapledger says: stdout is
// the program's, which a report among it would corrupt.
func TestRunReportGoesToStderr(t *testing.T) {
	java := fakeJava(t)
	snaps := t.TempDir()
	out, errOut, err := runCLI(t, "run", "--report", "--snapshot-dir", snaps, "--", java, "-cp", ".", "Main")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if out != "program output\n" {
		t.Errorf("stdout %q, want the program's output alone", out)
	}
	for _, want := range []string{"heapledger run: snapshot " + snaps, "heapledger report: ", "com.acme.Thing"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}
