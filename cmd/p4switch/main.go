// Command p4switch is p4rcm's P4 target: it runs the JSON p4c-bm2-ss
// writes for a v1model program on real interfaces, as BMv2's
// simple_switch_grpc does, and takes the same command line:
//
//	p4switch -i 1@veth1 -i 2@veth2 --log-console build/rcm.json --entries s1-runtime.json
//
// or several switches in one process, each with such a command line in
// a JSON file, the ports named mem:NAME on two of them a link in memory:
//
//	p4switch --group fabric.json
//
// Exit status: 0 after SIGINT, SIGTERM, SIGHUP or SIGPIPE (a switch
// runs until it is stopped), 1 when the switch fails while running, 2 when it was started wrongly (bad flag, a JSON it cannot run,
// an interface that does not exist, bad entries). Nothing is left
// changed on the interfaces. The command itself is package
// cmd/internal/p4switch, which p4ctl runs too ('p4ctl p4switch').
package main

import (
	"context"
	"io"
	"os"

	"github.com/p4rcm/p4rcm/cmd/internal/p4switch"
	"github.com/p4rcm/p4rcm/internal/stopsig"
)

// Exit statuses, as the tests name them.
const (
	exitOK    = p4switch.ExitOK
	exitUsage = p4switch.ExitUsage
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return p4switch.Run(ctx, args, stdout, stderr)
}

func main() {
	ctx, stop := stopsig.Context(context.Background())
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
