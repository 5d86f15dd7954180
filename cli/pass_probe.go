package main

import passlib "github.com/heapledger/heapledger/rewrite/passes"

func init() {
	registerPass("probe", "call heapledger.probe.Probe at entry, returns, exceptional exits and allocations (run with bin/heapledger-probe.jar, built by `make build`, on the classpath; -Dheapledger.probe.report=FILE writes the counts at exit)",
		plainPass(passlib.Probe()))
}
