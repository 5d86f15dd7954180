//go:build !linux

package memory

import "errors"

// canPage says the system maps files: not here, where arrays stay in memory of their own.
const canPage = false

func mapFile(dir string, size uintptr) (pagedArray, error) {
	return pagedArray{}, errors.New("arrays in files are not supported on this system")
}

func adviseLarge(a pagedArray)               {}
func unmapPages(a pagedArray)                {}
func writeBack(a pagedArray)                 {}
func freePages(a pagedArray, off, n uintptr) {}
func closeArray(a pagedArray)                {}
