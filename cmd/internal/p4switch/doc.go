// Package p4switch is the command of p4rcm's Go P4 target: it runs the
// JSON p4c-bm2-ss writes for a v1model program on network interfaces,
// as BMv2's simple_switch_grpc runs it, and takes the same command line
// (docs/target.md). Run is the whole command; cmd/p4switch calls it,
// and so does 'p4ctl p4switch', so that p4ctl emulate runs the Go target
// it was built with, with nothing else installed. It is a program's
// body, not a library: only the commands under cmd/ import it.
package p4switch
