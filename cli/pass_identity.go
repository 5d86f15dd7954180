package main

import (
	"github.com/urfave/cli/v2"

	passlib "github.com/heapledger/heapledger/rewrite/passes"
	"github.com/heapledger/heapledger/rewrite/transform"
)

func init() {
	registerPass("identity", "decode and re-encode every method without edits (proves the engine; output behaves like input)",
		func(*cli.Context) (transform.Class, error) { return passlib.Identity(), nil })
}
