package histogram

import (
	"fmt"
	"sort"
)

// TrendRow describes how one class's instance count moved over a series of histograms.
type TrendRow struct {
	Class string `json:"class"`
	// Counts and Bytes per histogram, in the order given (0 where the class was absent).
	Counts []uint64 `json:"instances"`
	Bytes  []uint64 `json:"bytes"`
	// Slope is the least-squares slope of the instance count per histogram step.
	Slope float64 `json:"slope"`
	// BytesSlope is the same for shallow bytes.
	BytesSlope float64 `json:"bytes_slope"`
	// Grew is the share of consecutive pairs in which the count rose (1 = grew every time).
	Grew float64 `json:"grew_share"`
	// First and Last are the counts in the first and last histogram.
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
}

// Trend ranks the classes whose instance counts keep growing across hs (in time order): only
// classes with a positive slope that grew in at least one interval are returned, those that grew
// in the largest share of intervals first (the thesis's "growing each dump"), then by slope, then
// by name.
func Trend(hs []*Histogram) ([]TrendRow, error) {
	if len(hs) < 2 {
		return nil, fmt.Errorf("a trend needs at least two histograms, got %d", len(hs))
	}
	k := len(hs)
	rows := map[string]*TrendRow{}
	for i, h := range hs {
		for _, e := range h.Entries {
			r := rows[e.Class]
			if r == nil {
				r = &TrendRow{Class: e.Class, Counts: make([]uint64, k), Bytes: make([]uint64, k)}
				rows[e.Class] = r
			}
			r.Counts[i] += e.Instances
			r.Bytes[i] += e.Bytes
		}
	}
	var out []TrendRow
	for _, r := range rows {
		r.Slope = slope(r.Counts)
		r.BytesSlope = slope(r.Bytes)
		grew := 0
		for i := 1; i < k; i++ {
			if r.Counts[i] > r.Counts[i-1] {
				grew++
			}
		}
		r.Grew = float64(grew) / float64(k-1)
		r.First, r.Last = r.Counts[0], r.Counts[k-1]
		if r.Slope > 0 && grew > 0 {
			out = append(out, *r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Grew != b.Grew {
			return a.Grew > b.Grew
		}
		if a.Slope != b.Slope {
			return a.Slope > b.Slope
		}
		return a.Class < b.Class
	})
	return out, nil
}

// slope fits y = a + b·x over x = 0..len(y)-1 by least squares and returns b.
func slope(y []uint64) float64 {
	n := float64(len(y))
	var sx, sy, sxx, sxy float64
	for i, v := range y {
		x, fy := float64(i), float64(v)
		sx += x
		sy += fy
		sxx += x * x
		sxy += x * fy
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}
