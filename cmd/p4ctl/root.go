package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// newRootCmd builds the command tree writing to out and errOut.
func newRootCmd(out, errOut io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "p4ctl",
		Short: "Congestion control for lossless (RoCEv2) datacenter fabrics",
		Long: `p4ctl drives p4rcm: P4 switches with RED/ECN, PFC and Regional Congestion
Mitigation, DCQCN host agents, and the simulator that compares them.

Exit status: 0 success, 1 failure at run time, 2 wrong usage.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newVersionCmd(), newBufferCmd(), newSimCmd(), newExperimentCmd(),
		newPipelineCmd(), newTableCmd(), newApplyCmd(), newCounterCmd(), newCloneCmd(),
		newECNCmd(), newPFCCmd(), newRCMCmd(), newStatsCmd(), newWatchCmd(), newFabricCmd(), newEmulateCmd(), newHostCmd())
	return root
}

// run executes the command line and returns the process exit status.
func run(args []string, out, errOut io.Writer) int {
	root := newRootCmd(out, errOut)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(errOut, "%s: %s\n", cmd.CommandPath(), statusText(err))
	return exitCode(err)
}
