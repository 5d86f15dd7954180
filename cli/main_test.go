package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCLI runs the heapledger app in-process and returns what it wrote to stdout and stderr.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	app := newApp()
	var out, errb bytes.Buffer
	app.Writer = &out
	app.ErrWriter = &errb
	err = app.Run(append([]string{"heapledger"}, args...))
	return out.String(), errb.String(), err
}

func TestHelpListsCommands(t *testing.T) {
	out, _, err := runCLI(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		if !strings.Contains(out, c.Name) {
			t.Errorf("help does not list %q:\n%s", c.Name, out)
		}
	}
}

func TestUnknownCommandFails(t *testing.T) {
	if _, _, err := runCLI(t, "no-such-command"); err == nil {
		t.Fatal("expected an error for an unknown command")
	}
}
