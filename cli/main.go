// Command heapledger rewrites Java bytecode so a running JVM can say who allocated its memory,
// who still holds it, and which module leaks; it also analyses heap dumps and snapshots.
//
// Each subcommand lives in its own file and registers itself with register() from an init
// function, so commands can be added without touching a shared list.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/urfave/cli/v2"
)

var commands []*cli.Command

// register adds a subcommand to the heapledger command line.
func register(c *cli.Command) { commands = append(commands, c) }

// subcommands holds children registered by name of their parent (e.g. "heap" → histo, analyze,
// trend), so that several files can contribute to one command group.
var subcommands = map[string][]*cli.Command{}

// registerSub adds child under the top-level command named parent. The parent must be registered
// by some file too; newApp attaches the children.
func registerSub(parent string, child *cli.Command) {
	subcommands[parent] = append(subcommands[parent], child)
}

// version is overridden at build time with -ldflags "-X main.version=...".
var version = "dev"

func newApp() *cli.App {
	sort.Slice(commands, func(i, j int) bool { return commands[i].Name < commands[j].Name })
	for _, c := range commands {
		subs := subcommands[c.Name]
		sort.Slice(subs, func(i, j int) bool { return subs[i].Name < subs[j].Name })
		for _, s := range subs {
			if !containsCommand(c.Subcommands, s.Name) {
				c.Subcommands = append(c.Subcommands, s)
			}
		}
	}
	return &cli.App{
		Name:                 "heapledger",
		Usage:                "exact, cheap memory accounting for Java programs by bytecode rewriting",
		Version:              version,
		Commands:             commands,
		EnableBashCompletion: true,
		ExitErrHandler: func(c *cli.Context, err error) {
			// Errors are printed once by main; urfave's default handler would exit early.
		},
	}
}

func main() {
	if err := newApp().Run(os.Args); err != nil {
		os.Exit(exitStatus(err, os.Stderr))
	}
}

// exitStatus prints err on w and returns the status to exit with. An error without a message
// only carries a status: `heapledger run` passes on the program's that way, and the program has
// said why it failed.
func exitStatus(err error, w io.Writer) int {
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(w, "heapledger:", msg)
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) && ec.ExitCode() != 0 {
		return ec.ExitCode()
	}
	return 1
}

func containsCommand(cs []*cli.Command, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}
