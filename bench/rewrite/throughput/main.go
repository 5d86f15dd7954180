// Command throughput measures how many classes per second one core rewrites with a heapledger
// pass, the Go side of bench/rewrite/run.sh. It loads every class of the given jars into memory
// (reading is not timed), runs the pass over them in a loop on one goroutine for a warm-up
// period, then for the measured period, and prints classes/s: the same protocol as AsmProbe's
// throughput mode, so the two numbers compare per core.
package main

import (
	"archive/zip"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/jar"
	"github.com/heapledger/heapledger/rewrite/passes"
	"github.com/heapledger/heapledger/rewrite/transform"
)

func main() {
	seconds := flag.Float64("seconds", 10, "length of the warm-up and of the measured period")
	pass := flag.String("pass", "probe", "pass to run: probe, count or identity")
	accts := flag.String("accounts", "*", "the count pass's accounts (as rewrite --accounts): '*' puts every class in an account; package accounts are what users run, where methods switch")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured period to this file")
	memprofile := flag.String("memprofile", "", "write an allocation profile (warm-up and measured period) to this file at the end")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: throughput [-seconds S] [-pass probe|count|identity] [-accounts PATTERNS] JAR...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	newPass, err := passByName(*pass, *accts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "throughput:", err)
		os.Exit(2)
	}
	p := newPass()
	classes, err := load(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "throughput:", err)
		os.Exit(1)
	}
	runtime.GOMAXPROCS(1) // one core, like the single Java thread it is compared with
	defer jar.TuneGC()()  // the garbage collector's setting of heapledger rewrite
	failed := 0
	var rate, cpuRate, allocs, bytes float64
	for phase := 0; phase < 2; phase++ {
		if phase == 1 && *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			if err != nil {
				fmt.Fprintln(os.Stderr, "throughput:", err)
				os.Exit(1)
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintln(os.Stderr, "throughput:", err)
				os.Exit(1)
			}
			defer pprof.StopCPUProfile()
		}
		period := time.Duration(*seconds * float64(time.Second))
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		cpu0 := cpuTime()
		start := time.Now()
		done := 0
		// The deadline is checked per class, so a corpus larger than one period still works.
		for i := 0; time.Since(start) < period; i++ {
			if i > 0 && i%len(classes) == 0 {
				// A fresh pass for each round, so the count pass's site table does not grow
				// without bound; creating one costs next to nothing.
				p = newPass()
			}
			c := classes[i%len(classes)]
			if _, err := p.TransformClass(c.name, c.data); err != nil && phase == 0 && i < len(classes) {
				failed++
			}
			done++
		}
		rate = float64(done) / time.Since(start).Seconds()
		cpuRate = float64(done) / (cpuTime() - cpu0).Seconds()
		runtime.ReadMemStats(&ms1)
		allocs = float64(ms1.Mallocs-ms0.Mallocs) / float64(done)
		bytes = float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(done)
	}
	if *memprofile != "" {
		if err := writeHeapProfile(*memprofile); err != nil {
			fmt.Fprintln(os.Stderr, "throughput:", err)
			os.Exit(1)
		}
	}
	fmt.Printf("heapledger classes=%d classes/s=%.0f classes/cpu-s=%.0f failed=%d allocs/class=%.0f bytes/class=%.0f\n",
		len(classes), rate, cpuRate, failed, allocs, bytes)
}

// writeHeapProfile writes the allocation profile: `go tool pprof -sample_index=alloc_space`
// (or alloc_objects) shows where the run allocated.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// passByName returns a constructor of the named pass.
func passByName(name, patterns string) (func() transform.Class, error) {
	switch name {
	case "probe":
		return passes.Probe, nil
	case "identity":
		return passes.Identity, nil
	case "count":
		set, err := accounts.Parse(patterns)
		if err != nil {
			return nil, err
		}
		return func() transform.Class {
			p, err := passes.Count(passes.CountOptions{Accounts: set, Table: accounts.NewTable(set)})
			if err != nil {
				panic(err) // only for a missing table, which is always given here
			}
			return p
		}, nil
	}
	return nil, fmt.Errorf("unknown pass %q", name)
}

// cpuTime is the CPU time the process has used (user + system, all threads): on a machine shared
// with other jobs it measures the work done, where wall time also measures the waiting.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type class struct {
	name string
	data []byte
}

func load(jars []string) ([]class, error) {
	var out []class
	for _, j := range jars {
		z, err := zip.OpenReader(j)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", j, err)
		}
		for _, f := range z.File {
			if f.FileInfo().IsDir() || !strings.HasSuffix(f.Name, ".class") {
				continue
			}
			r, err := f.Open()
			if err != nil {
				z.Close()
				return nil, fmt.Errorf("%s!%s: %w", j, f.Name, err)
			}
			data, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				z.Close()
				return nil, fmt.Errorf("%s!%s: %w", j, f.Name, err)
			}
			out = append(out, class{f.Name, data})
		}
		z.Close()
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no classes in %s", strings.Join(jars, " "))
	}
	return out, nil
}
