package hprof

// GeneralPathOnly makes r decode every sub-record on Next's general path, never its fast one,
// for tests that check the two agree.
func GeneralPathOnly(r *Reader) { r.noFast = true }
