package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/jar"
	"github.com/heapledger/heapledger/rewrite/javap"
)

func init() {
	register(&cli.Command{
		Name:      "inspect",
		Usage:     "print a class file in a javap-like view, or list the classes of a jar or directory",
		ArgsUsage: "FILE.class | JAR[!ENTRY] | DIR[!ENTRY]",
		Description: `Prints the version, access flags, this/super/interfaces, constant pool, fields and methods of a
class; with --code also each method's instructions (branch targets as labels L<offset>),
exception table, StackMapTable frames, line numbers and local variables.

A JAR or DIR alone lists its classes with their class file versions. JAR!ENTRY (or DIR!ENTRY)
prints one class: ENTRY is the entry path ("com/example/Foo.class"), or a class name with
slashes or dots ("com.example.Foo", "com/example/Foo$Inner"). Flags may come before or after it.

A label Ln marks offset n where a branch, switch, exception handler, line number, local
variable range or frame refers to it.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "pool", Value: true, Usage: "print the constant pool"},
			&cli.BoolFlag{Name: "no-pool", Usage: "do not print the constant pool"},
			&cli.BoolFlag{Name: "code", Usage: "print each method's code, exception table, frames, line numbers and local variables"},
			&cli.StringFlag{Name: "method", Usage: "print only the methods with this name (all overloads)"},
		},
		Action: runInspect,
	})
}

func runInspect(c *cli.Context) error {
	args, err := interspersedArgs(c, c.Command.Flags)
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	if len(args) != 1 {
		return fmt.Errorf("inspect: want exactly one FILE.class, JAR[!ENTRY] or DIR[!ENTRY], got %d arguments", len(args))
	}
	opt := javap.Options{Pool: c.Bool("pool") && !c.Bool("no-pool"), Code: c.Bool("code"), Method: c.String("method")}
	w := bufio.NewWriter(c.App.Writer)
	err = inspect(w, args[0], opt)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// inspect resolves arg to a class file, or to a jar or directory to list, and prints it.
func inspect(w io.Writer, arg string, opt javap.Options) error {
	container, entry, err := splitInspectArg(arg)
	if err != nil {
		return err
	}
	st, err := os.Stat(container)
	if err != nil {
		return fmt.Errorf("inspect: %s: %w", container, errors.Unwrap(err))
	}
	if entry == "" && !st.IsDir() && !looksLikeZip(container) {
		data, err := os.ReadFile(container)
		if err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		return printClass(w, container, data, opt)
	}
	in, err := jar.OpenInput(container)
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	defer in.Close()
	if entry == "" {
		return listClasses(w, in)
	}
	e, err := findEntry(in, entry)
	if err != nil {
		return err
	}
	data, err := e.ReadAll(jar.DefaultLimits)
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	return printClass(w, e.String(), data, opt)
}

// splitInspectArg separates "lib.jar!a/B.class" into the jar and the entry. A path that exists
// as given wins, so a file whose name contains '!' can still be inspected.
func splitInspectArg(arg string) (container, entry string, err error) {
	if arg == "" {
		return "", "", errors.New("inspect: empty argument")
	}
	if _, err := os.Stat(arg); err == nil {
		return arg, "", nil
	}
	for i := 0; i < len(arg); i++ {
		if arg[i] != '!' {
			continue
		}
		if _, err := os.Stat(arg[:i]); err == nil {
			if arg[i+1:] == "" {
				return "", "", fmt.Errorf("inspect: %s: empty entry name after '!'", arg)
			}
			return arg[:i], arg[i+1:], nil
		}
	}
	if i := strings.IndexByte(arg, '!'); i > 0 {
		return "", "", fmt.Errorf("inspect: %s: no such file or directory", arg[:i])
	}
	return "", "", fmt.Errorf("inspect: %s: no such file or directory", arg)
}

// looksLikeZip reports whether the file starts with a zip local header, so that a jar is
// recognised whatever its name.
func looksLikeZip(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false
	}
	return string(b[:]) == "PK\x03\x04" || string(b[:]) == "PK\x05\x06"
}

// findEntry finds a class by entry path or class name. When nothing matches it suggests
// entries with the same simple name, which is usually what a mistyped package needs.
func findEntry(in *jar.Input, name string) (*jar.Entry, error) {
	candidates := []string{name}
	if !strings.HasSuffix(name, ".class") {
		slashed := classfile.InternalName(name)
		candidates = append(candidates, name+".class", slashed+".class")
	}
	for _, cand := range candidates {
		for _, e := range in.Entries {
			if e.Name == cand {
				return e, nil
			}
		}
	}
	base := path.Base(candidates[len(candidates)-1])
	var similar []string
	for _, e := range in.Entries {
		if path.Base(e.Name) == base {
			similar = append(similar, e.Name)
		}
	}
	msg := fmt.Sprintf("inspect: %s!%s: no such entry", in.Path, name)
	if len(similar) > 0 {
		if len(similar) > 5 {
			similar = append(similar[:5], "...")
		}
		msg += " (did you mean " + strings.Join(similar, ", ") + "?)"
	}
	return nil, errors.New(msg)
}

// listClasses prints every class entry with its version and size; entries that are not class
// files are counted, not listed.
func listClasses(w io.Writer, in *jar.Input) error {
	classes, others := 0, 0
	for _, e := range in.Entries {
		if e.IsDir() {
			continue
		}
		if !strings.HasSuffix(e.Name, ".class") {
			others++
			continue
		}
		classes++
		data, err := e.ReadAll(jar.DefaultLimits)
		if err != nil {
			fmt.Fprintf(w, "%s  (unreadable: %v)\n", e.Name, err)
			continue
		}
		ver := "not a class file"
		if len(data) >= 8 && string(data[:4]) == "\xCA\xFE\xBA\xBE" {
			major := uint16(data[6])<<8 | uint16(data[7])
			ver = fmt.Sprintf("version %d.%d, %s", major, uint16(data[4])<<8|uint16(data[5]), javap.Release(major))
		}
		fmt.Fprintf(w, "%s  (%s, %d bytes)\n", e.Name, ver, len(data))
	}
	_, err := fmt.Fprintf(w, "%d classes, %d other entries in %s\n", classes, others, in.Path)
	return err
}

// printClass prints one class with package javap, its errors prefixed with the command.
func printClass(w io.Writer, name string, data []byte, opt javap.Options) error {
	if err := javap.Print(w, name, data, opt); err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	return nil
}
