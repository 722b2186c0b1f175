// Command p4ctl is p4rcm's command-line tool: switch operations over
// P4Runtime, the PFC/ECN buffer calculator, experiments and reports.
//
// Exit status: 0 on success, 1 when a command fails at run time, 2 when it
// was called wrongly (unknown command or flag, malformed or out-of-range
// value, a flag it would ignore), 128 + N when signal N stopped a run
// before its work was done (docs/exit-status.md). Errors are one line on
// stderr that says what to do.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
