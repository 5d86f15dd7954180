package main

import (
	"github.com/urfave/cli/v2"

	passlib "github.com/heapledger/heapledger/rewrite/passes"
	"github.com/heapledger/heapledger/rewrite/transform"
)

func init() {
	registerPass("probe", "call heapledger.probe.Probe at entry, returns, exceptional exits and allocations (run with bin/heapledger-probe.jar, built by `make build`, on the classpath; -Dheapledger.probe.report=FILE writes the counts at exit)",
		func(*cli.Context) (transform.Class, error) { return passlib.Probe(), nil })
}
