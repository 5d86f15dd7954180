// Command screenshot takes PNG screenshots of a heapledger HTML report in headless Chromium,
// for the documentation (scripts/report-screenshots.sh regenerates docs/images with it).
//
//	go run ./tools/screenshot [-width 1400] [-search TERM] [-zoom FRAME] REPORT.html OUT.png[=CSS] ...
//
// Each OUT.png is a screenshot of the element the CSS selector picks (the whole page when none
// is given), once the report has drawn itself; -search types TERM into the allocation flame
// graph's search box first, -zoom clicks the first frame of that name.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heapledger/heapledger/internal/chromium"
)

func main() {
	width := flag.Int("width", 1400, "window width in CSS pixels")
	search := flag.String("search", "", "search the allocation flame graph for this text first")
	zoom := flag.String("zoom", "", "click the first frame of the allocation flame graph with this name first")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: screenshot [flags] REPORT.html OUT.png[=CSS] ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 2 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Args()[1:], *width, *search, *zoom); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

func run(report string, shots []string, width int, search, zoom string) error {
	abs, err := filepath.Abs(report)
	if err != nil {
		return err
	}
	b, err := chromium.Start(chromium.Options{Width: width, Height: 1000})
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.Open("file://" + abs); err != nil {
		return err
	}
	if err := b.Wait("var r = window.heapledgerReport; return !!(r && (r.ready || r.error))", time.Minute); err != nil {
		return err
	}
	var failure string
	if err := b.Eval(&failure, "return window.heapledgerReport.error || ''"); err != nil || failure != "" {
		return fmt.Errorf("the report did not draw: %v%s", err, failure)
	}
	if zoom != "" {
		if err := b.Eval(nil, `var g = [...window.heapledgerReport.flames.alloc.element.querySelectorAll("g")].find(g => g.getAttribute("name") === arguments[0]);
			if (!g) throw new Error("no frame " + arguments[0]); g.dispatchEvent(new MouseEvent("click", {bubbles: true}));`, zoom); err != nil {
			return err
		}
	}
	if search != "" {
		if err := b.Eval(nil, `var f = window.heapledgerReport.flames.alloc; f.search.value = arguments[0]; f.search.dispatchEvent(new Event("input"));`, search); err != nil {
			return err
		}
	}
	// Transitions (zoom, labels) and the search's debounce settle within a second.
	time.Sleep(1500 * time.Millisecond)
	var height int
	if err := b.Eval(&height, "return document.documentElement.scrollHeight"); err != nil {
		return err
	}
	if err := b.SetWindow(width, height+120); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	for _, shot := range shots {
		out, sel, ok := strings.Cut(shot, "=")
		if !ok {
			sel = "body"
		}
		png, err := b.ElementScreenshot(sel)
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, png, 0o644); err != nil {
			return err
		}
		fmt.Printf("wrote %s (%s)\n", out, sel)
	}
	return nil
}
