package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/p4rcm/p4rcm/internal/stopsig"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// usageError is a command called wrongly; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// interruptedError is a command stopped by a signal before its work
// was done; it exits 128 plus the signal's number (130 for Ctrl-C).
type interruptedError struct {
	*stopsig.Stopped
	// what says what became of the work.
	what string
}

func (e *interruptedError) Error() string {
	return fmt.Sprintf("interrupted (%v): %s", e.Signal, e.what)
}

// stoppedErr is err, or, if a signal ended ctx, an interruptedError
// saying what, for a command whose work the signal cut short.
func stoppedErr(ctx context.Context, err error, what string) error {
	if s, ok := stopsig.Of(ctx); ok {
		return &interruptedError{Stopped: s, what: what}
	}
	return err
}

// exitCode classifies an error returned by a command.
func exitCode(err error) int {
	var ue *usageError
	var ie *interruptedError
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ie):
		return ie.ExitCode()
	}
	return exitRuntime
}

// flagError turns pflag's parse errors into usage errors worded for people.
func flagError(cmd *cobra.Command, err error) error {
	var inv *pflag.InvalidValueError
	if errors.As(err, &inv) {
		return usageErrorf("--%s: %v; see '%s --help'", inv.GetFlag().Name, numberError(errors.Unwrap(err)), cmd.CommandPath())
	}
	return usageErrorf("%v; see '%s --help'", err, cmd.CommandPath())
}

// numberError words the errors of pflag's number flags, which are
// strconv's ("strconv.ParseUint: parsing ...: invalid syntax").
func numberError(err error) error {
	var ne *strconv.NumError
	if !errors.As(err, &ne) {
		return err
	}
	want := map[string]string{"ParseFloat": "a number", "ParseInt": "a whole number", "Atoi": "a whole number",
		"ParseUint": "a whole number, 0 or more"}[ne.Func]
	if want == "" {
		want = "a number"
	}
	if errors.Is(ne.Err, strconv.ErrRange) {
		return fmt.Errorf("%q is out of range for %s", ne.Num, want)
	}
	return fmt.Errorf("%q is not %s", ne.Num, want)
}

// maxArgs accepts at most n positional arguments.
func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usageErrorf("takes at most %d argument(s), got %d: %q; see '%s --help'", n, len(args), args, cmd.CommandPath())
		}
		return nil
	}
}

// exactArgs wants exactly n arguments.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("takes %d argument(s), got %d: %q; see '%s --help'", n, len(args), args, cmd.CommandPath())
		}
		return nil
	}
}

// writeJSON prints v as indented JSON, the --json output of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// needCommand is the RunE of a command that groups others, called
// without one: wrong usage (exit 2), naming them, as an unknown one is.
func needCommand(cmd *cobra.Command, args []string) error {
	if err := noArgs(cmd, args); err != nil {
		return err
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return usageErrorf("name a command: %s; see '%s --help'", strings.Join(names, ", "), cmd.CommandPath())
}

// noArgs rejects positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			return usageErrorf("unknown command %q; see '%s --help' for the commands", args[0], cmd.CommandPath())
		}
		return usageErrorf("unexpected argument %q; see '%s --help'", args[0], cmd.CommandPath())
	}
	return nil
}
