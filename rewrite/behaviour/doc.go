// Package behaviour runs real programs from Debian packages before and after the probe pass
// and checks that they behave the same: ecj compiling a source tree, xalan transforming a
// document, h2 running an SQL script in memory and sunflow's benchmark passing its image check.
// It holds only tests.
package behaviour
