package stacks

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// StackOptions choose how stacks become lines of frames, in collapsed stacks and flame graphs.
type StackOptions struct {
	// Type is the sample type to write ("" for the profile's default).
	Type string
	// Accounts puts each sample's account below its stack as a frame of its own,
	// "[demo.reports]", as async-profiler puts a thread's name below its stacks: the graph then
	// splits by the principal charged first.
	Accounts bool
	// Lines appends ":LINE" to method frames whose line is known, so that a method's sites
	// stay apart (async-profiler's --lines).
	Lines bool
}

// frameText is a frame as collapsed stacks and flame graphs name it.
func frameText(f Frame, lines bool) string {
	if lines && f.Kind == MethodFrame && f.Line > 0 {
		return f.Name + ":" + strconv.Itoa(f.Line)
	}
	return f.Name
}

// AccountFrame names the frame StackOptions.Accounts puts below a sample's stack.
func AccountFrame(account string) string { return "[" + account + "]" }

// pathOf is the frames of s from the root to the leaf, as opt names them.
func pathOf(s Sample, opt StackOptions) []string {
	path := make([]string, 0, len(s.Stack)+1)
	if opt.Accounts {
		path = append(path, AccountFrame(s.Account))
	}
	for i := len(s.Stack) - 1; i >= 0; i-- {
		path = append(path, frameText(s.Stack[i], opt.Lines))
	}
	return path
}

// valueIndex resolves opt.Type in p.
func (p *Profile) valueIndex(opt StackOptions) (int, error) {
	typ := opt.Type
	if typ == "" {
		typ = p.Default
	}
	i := p.Index(typ)
	if i < 0 {
		names := make([]string, len(p.Types))
		for k, t := range p.Types {
			names[k] = t.Type
		}
		return -1, fmt.Errorf("sample type %q is not in this profile (it has %s)", typ, strings.Join(names, ", "))
	}
	return i, nil
}

// WriteCollapsed writes p as collapsed stacks, the input of flamegraph.pl, speedscope,
// Pyroscope and every other flame-graph tool: a line per distinct stack, frames from the root
// to the leaf separated by ';', then a space and the value summed over the stack's samples.
// Lines are sorted, stacks whose value is 0 are left out, and a ';' inside a frame's name (an
// unparsed descriptor) is written as ','. A difference profile writes two values, the base's
// and the new one's, as difffolded.pl does for flamegraph.pl's differential graphs.
func (p *Profile) WriteCollapsed(w io.Writer, opt StackOptions) error {
	if err := p.CheckValid(); err != nil {
		return err
	}
	idx, err := p.valueIndex(opt)
	if err != nil {
		return err
	}
	diff := p.HasBase()
	type sums struct{ base, now int64 }
	byStack := map[string]*sums{}
	for _, s := range p.Samples {
		path := pathOf(s, opt)
		for i, f := range path {
			path[i] = strings.ReplaceAll(f, ";", ",")
		}
		key := strings.Join(path, ";")
		t := byStack[key]
		if t == nil {
			t = &sums{}
			byStack[key] = t
		}
		if s.Base {
			t.base -= s.Values[idx]
		} else {
			t.now += s.Values[idx]
		}
	}
	keys := make([]string, 0, len(byStack))
	for k, t := range byStack {
		if t.base != 0 || t.now != 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		t := byStack[k]
		if diff {
			fmt.Fprintf(bw, "%s %d %d\n", k, t.base, t.now)
		} else {
			fmt.Fprintf(bw, "%s %d\n", k, t.now)
		}
	}
	return bw.Flush()
}
