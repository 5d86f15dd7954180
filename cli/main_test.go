package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
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

// A failed program's status passes through `heapledger run` without a line of its own: the
// program has said why it failed, and "heapledger: " with nothing after it said nothing.
func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
		out  string
	}{
		{cli.Exit("", 3), 3, ""},
		{cli.Exit("rewrite: --strict: 2 classes failed", 2), 2, "heapledger: rewrite: --strict: 2 classes failed\n"},
		{fmt.Errorf("heap analyze: %w", cli.Exit("wrapped", 4)), 4, "heapledger: heap analyze: wrapped\n"},
		{errors.New("no such file"), 1, "heapledger: no such file\n"},
	} {
		var w bytes.Buffer
		if code := exitStatus(c.err, &w); code != c.code || w.String() != c.out {
			t.Errorf("%v: status %d, printed %q; want %d, %q", c.err, code, w.String(), c.code, c.out)
		}
	}
}
