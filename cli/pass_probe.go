package main

import (
	"github.com/urfave/cli/v2"

	passlib "github.com/heapledger/heapledger/rewrite/passes"
	"github.com/heapledger/heapledger/rewrite/transform"
)

func init() {
	registerPass("probe", "call heapledger.probe.Probe at entry, returns, exceptional exits and allocations (needs build/probe/heapledger-probe.jar on the classpath)",
		func(*cli.Context) (transform.Class, error) { return passlib.Probe(), nil })
}
