// Package stopsig is the signals that stop p4rcm's commands: Ctrl-C
// (SIGINT), SIGTERM (kill, timeout, CI), SIGHUP (a closed terminal or
// SSH session) and SIGPIPE (a reader of the output gone, as `| head`
// goes). A command that makes what must be removed (namespaces, links,
// switch processes) takes them as the end of a context and cleans up,
// where the signals' default action would kill it and leave all that
// behind; the context says which signal came, for the exit status.
package stopsig

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Signals are the signals Context stops on.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE}

// Stopped is the cause of a context Context ended: the signal.
type Stopped struct{ Signal syscall.Signal }

func (s *Stopped) Error() string { return fmt.Sprintf("stopped by %v", s.Signal) }

// ExitCode is the exit status of a command stopped by the signal before
// its work was done, as a shell gives one a signal killed: 128 plus the
// signal's number (130 for Ctrl-C, 143 for SIGTERM, 141 for SIGPIPE).
func (s *Stopped) ExitCode() int { return 128 + int(s.Signal) }

// Context is parent, ended by the first of Signals, whose Stopped is
// then its cause. With SIGPIPE caught, a write to a pipe whose reader is
// gone returns an error (EPIPE) instead of killing the process. stop
// releases the signals.
func Context(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, Signals...)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			cancel(&Stopped{Signal: sig.(syscall.Signal)})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(context.Canceled)
	}
}

// Of is the signal that ended ctx, if one of Context's did.
func Of(ctx context.Context) (*Stopped, bool) {
	s, ok := context.Cause(ctx).(*Stopped)
	return s, ok
}
