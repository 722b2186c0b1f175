//go:build !linux

package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newEmulateCmd says why emulate cannot run here: it needs Linux's
// network namespaces, veths and packet sockets.
func newEmulateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "emulate [SCENARIO.yaml]",
		Short: "Run a scenario on real packets (Linux only)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("emulate needs Linux: network namespaces, veths and packet sockets")
		},
	}
}

// newHostCmd says why host cannot run here: it needs Linux's packet
// sockets.
func newHostCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "host",
		Short: "Run one host's RoCEv2 agent (Linux only)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("host needs Linux: packet sockets")
		},
	}
}
