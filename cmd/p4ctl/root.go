package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/p4rcm/p4rcm/cmd/internal/p4switch"
)

// newRootCmd builds the command tree writing to out and errOut.
func newRootCmd(out, errOut io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "p4ctl",
		Short: "Congestion control for lossless (RoCEv2) datacenter fabrics",
		Long: `p4ctl drives p4rcm: P4 switches with RED/ECN, PFC and Regional Congestion
Mitigation, DCQCN host agents, and the simulator that compares them.

Exit status: 0 success, 1 failure at run time, 2 wrong usage, 128 + N
when signal N stopped a run before its work was done (130 for Ctrl-C);
docs/exit-status.md.`,
		Args:          noArgs,
		RunE:          needCommand,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.PersistentPreRunE = checkDurations
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newVersionCmd(), newBufferCmd(), newSimCmd(), newExperimentCmd(),
		newPipelineCmd(), newTableCmd(), newApplyCmd(), newCounterCmd(), newCloneCmd(),
		newECNCmd(), newPFCCmd(), newRCMCmd(), newINTCmd(), newStatsCmd(), newWatchCmd(), newFabricCmd(), newEmulateCmd(), newHostCmd())
	return root
}

// switchCommand runs p4rcm's Go P4 target as the p4switch command does,
// with its command line: 'p4ctl p4switch -i 1@veth1 ... rcm.json'. It is
// how emulate (and mininet/run.py) start switches where no p4switch is
// installed: the target this p4ctl was built with. Not a cobra command,
// so that p4switch's flags, help and exit statuses are its own; not in
// --help, since p4switch is the command users are told of.
const switchCommand = "p4switch"

// run executes the command line and returns the process exit status.
func run(args []string, out, errOut io.Writer) int {
	if len(args) > 0 && args[0] == switchCommand {
		return runSwitch(args[1:], out, errOut)
	}
	root := newRootCmd(out, errOut)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var ie *interruptedError
	if errors.As(err, &ie) && ie.Signal == syscall.SIGPIPE {
		// The reader of the output is gone: a word to it would be
		// another SIGPIPE.
		return exitCode(err)
	}
	fmt.Fprintf(errOut, "%s: %s\n", cmd.CommandPath(), statusText(err))
	return exitCode(err)
}

// runSwitch is 'p4ctl p4switch': the Go target until SIGINT, SIGTERM or
// SIGHUP.
func runSwitch(args []string, out, errOut io.Writer) int {
	ctx, stop := interrupted(context.Background())
	defer stop()
	return p4switch.Run(ctx, args, out, errOut)
}

// mustBePositive are the duration flags 0 makes no sense for: the time
// to wait for a switch, or between two reads.
var mustBePositive = map[string]bool{"timeout": true, "interval": true}

// checkDurations refuses a negative duration in any flag (no flag of
// p4ctl's takes one: "--watch -1s" would read as fast as it could), and
// 0 where a wait or an interval is needed.
func checkDurations(cmd *cobra.Command, _ []string) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil || f.Value.Type() != "duration" {
			return
		}
		d, _ := time.ParseDuration(f.Value.String())
		switch {
		case d < 0:
			err = usageErrorf("--%s %s: want a duration of 0 or more, such as 1s; see '%s --help'", f.Name, f.Value, cmd.CommandPath())
		case d == 0 && mustBePositive[f.Name]:
			err = usageErrorf("--%s 0: want a duration above 0, such as 1s; see '%s --help'", f.Name, cmd.CommandPath())
		}
	})
	return err
}
