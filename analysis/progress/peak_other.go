//go:build !linux

package progress

// PeakResident is not known here: it reports -1.
func PeakResident() int64 { return -1 }
