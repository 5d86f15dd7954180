package snapshot

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Header holds a snapshot's header lines by key: reason, program, pid, time, uptime_ms,
// threads, dropped, dropped_first, liveness, size_model. Values are kept as written in the
// text format, whichever encoding they were read from.
type Header map[string]string

// integerKeys are the header values that are integers: JSON numbers in JSON version 3 and in
// reports, strings in older JSON.
var integerKeys = map[string]bool{"pid": true, "uptime_ms": true, "threads": true, "dropped": true, "increments": true,
	"switches": true, "switches_left_out": true}

// set records one header value. Runtimes before JSON version 3 wrote "dropped" as
// "N first: WHAT"; it is split so that dropped is always the count.
func (h Header) set(key, value string) {
	if key == "dropped" {
		if n, first, ok := strings.Cut(value, " first: "); ok {
			value = n
			h["dropped_first"] = first
		}
	}
	h[key] = value
}

// MarshalJSON writes the integer values as JSON numbers, the rest as strings.
func (h Header) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(h))
	for k, v := range h {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && integerKeys[k] {
			out[k] = n
		} else {
			out[k] = v
		}
	}
	return json.Marshal(out)
}

// jsonText is a JSON string or number, as its text: JSON version 3 writes integers as
// numbers where older versions wrote strings, and both are read.
type jsonText string

func (t *jsonText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = jsonText(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*t = jsonText(n)
	return nil
}
