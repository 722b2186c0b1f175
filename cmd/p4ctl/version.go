package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time for releases:
// go build -ldflags "-X main.version=v0.1.0" ./cmd/p4ctl
var version = ""

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print p4ctl's version, commit and Go version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionString())
			return err
		},
	}
}

// versionString is "p4ctl VERSION (commit REV[, modified]) GOVERSION". The
// version falls back to the module version and the commit to the VCS
// stamp go build records.
func versionString() string {
	v, rev, dirty, goVersion := version, "", false, "unknown Go"
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
		if v == "" && info.Main.Version != "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	s := "p4ctl " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += ", modified"
		}
		s += " (commit " + rev + ")"
	}
	return s + " " + goVersion
}
