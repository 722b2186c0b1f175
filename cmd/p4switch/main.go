// Command p4switch is p4rcm's P4 target: it runs the JSON p4c-bm2-ss
// writes for a v1model program on real interfaces, as BMv2's
// simple_switch_grpc does, and takes the same command line:
//
//	p4switch -i 1@veth1 -i 2@veth2 --log-console build/rcm.json --entries s1-runtime.json
//
// Exit status: 0 after SIGINT or SIGTERM, 1 when the switch fails while
// running, 2 when it was started wrongly (bad flag, a JSON it cannot run,
// an interface that does not exist, bad entries). Nothing is left
// changed on the interfaces.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
