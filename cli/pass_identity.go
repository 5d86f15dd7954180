package main

import passlib "github.com/heapledger/heapledger/rewrite/passes"

func init() {
	registerPass("identity", "decode and re-encode every method without edits (proves the engine; output behaves like input)",
		plainPass(passlib.Identity()))
}
