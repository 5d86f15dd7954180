package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountPassJMXOption: --jmx writes the runtime's JMX mode into the table's config lines,
// where the runtime reads it at start-up; a value the runtime does not know fails the rewrite
// instead of becoming a warning at every launch.
func TestCountPassJMXOption(t *testing.T) {
	dir := t.TempDir()
	classes := filepath.Join(dir, "classes")
	if err := os.MkdirAll(classes, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"auto", "on", "off"} {
		out := filepath.Join(dir, "out-"+mode)
		if _, stderr, err := runCLI(t, "rewrite", "--accounts", "com.acme.*", "--jmx", mode, classes, "-o", out); err != nil {
			t.Fatalf("--jmx %s: %v\n%s", mode, err, stderr)
		}
		table, err := os.ReadFile(out + ".table.tsv")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(table), "\nconfig\tjmx\t"+mode+"\n") {
			t.Errorf("--jmx %s: the table has no config line for it:\n%s", mode, table)
		}
	}
	// Without the option the table says nothing, so the runtime's own default (auto) holds.
	out := filepath.Join(dir, "out-default")
	if _, stderr, err := runCLI(t, "rewrite", "--accounts", "com.acme.*", classes, "-o", out); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if table, _ := os.ReadFile(out + ".table.tsv"); strings.Contains(string(table), "config\tjmx") {
		t.Errorf("a jmx config line without --jmx:\n%s", table)
	}
	_, _, err := runCLI(t, "rewrite", "--accounts", "com.acme.*", "--jmx", "yes", classes, "-o", filepath.Join(dir, "bad"))
	if err == nil || !strings.Contains(err.Error(), `--jmx "yes": must be auto, on or off`) {
		t.Errorf("--jmx yes: %v", err)
	}
	// Under the agent the option is checked before the JVM starts.
	if _, _, err := runCLI(t, "run", "--accounts", "com.acme.*", "--jmx", "yes", "--", "java", "-version"); err == nil || !strings.Contains(err.Error(), "--jmx") {
		t.Errorf("run --jmx yes: %v", err)
	}
}

// TestAgentCommandsTakeJMX: agent, run, attach and the service they start all take --jmx, as
// every count-pass option, and the agent hands it to the service it starts.
func TestAgentCommandsTakeJMX(t *testing.T) {
	for _, cmd := range []string{"agent", "run", "attach", "serve"} {
		found := false
		for _, c := range newApp().Commands {
			if c.Name != cmd {
				continue
			}
			for _, f := range c.Flags {
				if f.Names()[0] == "jmx" {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("heapledger %s has no --jmx", cmd)
		}
	}
	needAgent(t)
	dir := t.TempDir()
	if _, stderr, err := runCLI(t, "agent", "--accounts", "com.acme.*", "--jmx", "off", "-o", dir); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	launcher, err := os.ReadFile(filepath.Join(dir, LauncherName))
	if err != nil {
		t.Fatal(err)
	}
	// The agent option is percent-encoded: "arg=--jmx=off" becomes arg=--jmx%3Doff.
	if !strings.Contains(string(launcher), "arg=--jmx%3Doff") {
		t.Errorf("the launcher does not pass --jmx=off to the service:\n%s", launcher)
	}
}
