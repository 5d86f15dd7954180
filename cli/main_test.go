package main

import (
	"bytes"
	"encoding/json"
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

// cliJSON runs a command that prints JSON, fails the test if it fails or its output does not
// decode into v, and returns the output.
func cliJSON(t *testing.T, v any, args ...string) string {
	t.Helper()
	js, _, err := runCLI(t, args...)
	if err != nil {
		t.Fatalf("heapledger %s: %v", strings.Join(args, " "), err)
	}
	if err := json.Unmarshal([]byte(js), v); err != nil {
		t.Fatalf("heapledger %s: the output does not decode: %v\n%s", strings.Join(args, " "), err, js)
	}
	return js
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
