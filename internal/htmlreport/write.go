package htmlreport

import (
	"bufio"
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
	"text/template"
)

//go:embed assets/report.html assets/report.css assets/report.js assets/vendor
var assets embed.FS

// Library is a JavaScript library the page embeds.
type Library struct {
	Name, Version, License string
	Files                  []string // under assets/vendor, in load order: scripts, then styles
	LicenseFile            string
}

// Libraries are the embedded libraries, in the order the page loads them (d3-flame-graph needs
// d3 first). fetch.sh in assets/vendor fetches these versions.
var Libraries = []Library{
	{"d3", "7.9.2", "ISC", []string{"d3.min.js"}, "LICENSE.d3"},
	{"d3-flame-graph", "5.0.0", "Apache-2.0", []string{"d3-flamegraph.umd.min.js"}, "LICENSE.d3-flame-graph"},
	{"uPlot", "1.6.32", "MIT", []string{"uPlot.iife.min.js", "uPlot.min.css"}, "LICENSE.uplot"},
}

type inline struct {
	Name, Text string
}

var page = template.Must(template.New("report.html").ParseFS(assets, "assets/report.html"))

// Write writes p as one HTML file that needs nothing else: the libraries, the page's own
// script and style, and the data are all inside it.
func Write(w io.Writer, p *Page) error {
	data, err := json.Marshal(p) // escapes '<', '>' and '&': safe inside a script element
	if err != nil {
		return err
	}
	var v struct {
		Title                string
		Styles, Scripts      []inline
		Data, Credits, Notes string
	}
	v.Title = html.EscapeString(p.Title)
	v.Data = string(data)
	var credits, notes []string
	for _, lib := range Libraries {
		for _, f := range lib.Files {
			text, err := assets.ReadFile("assets/vendor/" + f)
			if err != nil {
				return err
			}
			in := inline{lib.Name, string(text)}
			if strings.HasSuffix(f, ".css") {
				v.Styles = append(v.Styles, in)
			} else {
				v.Scripts = append(v.Scripts, in)
			}
		}
		lic, err := assets.ReadFile("assets/vendor/" + lib.LicenseFile)
		if err != nil {
			return err
		}
		credits = append(credits, fmt.Sprintf("%s %s (%s)", lib.Name, lib.Version, lib.License))
		notes = append(notes, fmt.Sprintf("%s %s\n\n%s", lib.Name, lib.Version, lic))
	}
	for _, own := range []string{"report.css", "report.js"} {
		text, err := assets.ReadFile("assets/" + own)
		if err != nil {
			return err
		}
		in := inline{"heapledger", string(text)}
		if strings.HasSuffix(own, ".css") {
			v.Styles = append(v.Styles, in)
		} else {
			v.Scripts = append(v.Scripts, in)
		}
	}
	// Inlined text ends its element at the first "</script" or "</style": a library that ever
	// holds one must be escaped, not silently cut.
	for _, in := range append(append([]inline{}, v.Styles...), v.Scripts...) {
		if low := strings.ToLower(in.Text); strings.Contains(low, "</script") || strings.Contains(low, "</style") {
			return fmt.Errorf("embedded %s holds an end tag and cannot be inlined", in.Name)
		}
	}
	v.Credits = html.EscapeString(strings.Join(credits, ", "))
	v.Notes = html.EscapeString(strings.Join(notes, "\n\n"+strings.Repeat("-", 72)+"\n\n"))
	bw := bufio.NewWriter(w)
	if err := page.Execute(bw, v); err != nil {
		return err
	}
	return bw.Flush()
}
