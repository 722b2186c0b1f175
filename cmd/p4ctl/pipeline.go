package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/tutorialjson"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/prototext"
)

func newPipelineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Install or read the P4 program a running switch runs",
		Args:  noArgs,
		RunE:  needCommand,
	}
	cmd.AddCommand(newPipelineSetCmd(), newPipelineGetCmd())
	return cmd
}

func newPipelineSetCmd() *cobra.Command {
	var sf *switchFlags
	var p4info, device string
	var cookie uint64
	cmd := &cobra.Command{
		Use:   "set",
		Short: "Install a program (SetForwardingPipelineConfig, VERIFY_AND_COMMIT): empties the switch's tables",
		Long: `set installs a program on the switch: by default the built-in rcm.p4
(p4/build), or the P4Info (text format) and BMv2 JSON that p4c-bm2-ss
writes. The cookie names the build (default: a hash of both files), so
that a controller can later adopt the pipeline it expects.`,
		Example: `  p4ctl pipeline set
  p4ctl pipeline set --p4info build/basic.p4.p4info.txt --json build/basic.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var p controlplane.Pipeline
			switch {
			case p4info == "" && device == "":
				info, err := p4.P4Info()
				if err != nil {
					return err
				}
				// The files' cookie, as --p4info and --json of the
				// committed build would give: the same from every
				// binary, and p4switch's when started with them.
				p = controlplane.Pipeline{Info: info, DeviceConfig: p4.DeviceConfig(), Cookie: controlplane.Cookie(p4.P4InfoText(), p4.DeviceConfig())}
			case p4info == "" || device == "":
				return usageErrorf("--p4info and --json go together")
			default:
				var err error
				if p, err = controlplane.ReadPipeline(p4info, device, 0); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("cookie") {
				p.Cookie = cookie
			}
			s, err := sf.dialPrimary(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.SetPipeline(cmd.Context(), p); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pipeline set on device %d at %s: %d tables, %d actions, cookie %#x\n",
				sf.deviceID, sf.addr, len(p.Info.Tables), len(p.Info.Actions), p.Cookie)
			return nil
		},
	}
	sf = addSwitchFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&p4info, "p4info", "", "the program's P4Info, text format (default: the built-in rcm.p4)")
	fs.StringVar(&device, "json", "", "the program's BMv2 JSON (default: the built-in rcm.p4)")
	fs.Uint64Var(&cookie, "cookie", 0, "the pipeline's cookie (default: a hash of both files)")
	return cmd
}

func newPipelineGetCmd() *cobra.Command {
	var sf *switchFlags
	var p4infoOut, jsonOut string
	cmd := &cobra.Command{
		Use:   "get",
		Short: "Read the switch's program: its cookie and size, and optionally its files",
		Example: `  p4ctl pipeline get
  p4ctl pipeline get --p4info-out running.p4info.txtpb --json-out running.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := sf.dialReader(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			p, err := s.GetPipeline(cmd.Context())
			if err != nil {
				// A switch that runs none is told in words.
				if aerr := sf.adopt(cmd.Context(), s); aerr != nil {
					return aerr
				}
				return err
			}
			if p4infoOut != "" {
				text, err := prototext.MarshalOptions{Multiline: true}.Marshal(p.Info)
				if err != nil {
					return err
				}
				if err := tutorialjson.WriteFile(p4infoOut, text); err != nil {
					return err
				}
			}
			if jsonOut != "" {
				if err := tutorialjson.WriteFile(jsonOut, p.DeviceConfig); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "device %d at %s: cookie %#x, %d tables, %d actions, %d counters, %d digests, device config %d bytes\n",
				sf.deviceID, sf.addr, p.Cookie, len(p.Info.Tables), len(p.Info.Actions), len(p.Info.Counters), len(p.Info.Digests), len(p.DeviceConfig))
			return nil
		},
	}
	sf = addReadFlags(cmd)
	cmd.Flags().StringVar(&p4infoOut, "p4info-out", "", "write the P4Info (text format) to this file")
	cmd.Flags().StringVar(&jsonOut, "json-out", "", "write the device config (BMv2 JSON) to this file")
	return cmd
}

func newApplyCmd() *cobra.Command {
	var sf *switchFlags
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "apply FILE.json",
		Short: "Install a p4lang tutorials runtime file: entries, defaults, multicast groups, clone sessions",
		Long: `apply makes the switch hold what a runtime file (s1-runtime.json) names:
missing entries are inserted, differing ones modified, the rest left alone,
so a second apply changes nothing and says so. Entries the file does not
name stay. The whole file is checked against the program before anything
is sent. When the file names a p4info and a bmv2_json (paths as written,
or relative to the file), that program is installed first unless the
switch already runs it (by cookie).`,
		Example: `  p4ctl apply s1-runtime.json
  p4ctl apply --dry-run s1-runtime.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("name one runtime file; see '%s --help'", cmd.CommandPath())
			}
			rt, err := tutorialjson.LoadRuntime(args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			// A dry run only reads: it takes no part in arbitration.
			open := sf.dialPrimary
			if dryRun {
				open = sf.dialReader
			}
			s, err := open(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			if rt.P4Info != "" && rt.BMv2JSON != "" && !dryRun {
				p, err := controlplane.ReadPipeline(near(args[0], rt.P4Info), near(args[0], rt.BMv2JSON), 0)
				if err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				installed, err := s.EnsurePipeline(ctx, p)
				if err != nil {
					return err
				}
				if installed {
					fmt.Fprintf(cmd.OutOrStdout(), "pipeline set: cookie %#x\n", p.Cookie)
				}
			} else if err := s.AdoptPipeline(ctx, 0); err != nil {
				return err
			}
			want, err := s.RuntimeEntities(rt)
			if err != nil {
				return err
			}
			if dryRun {
				updates, plan, err := s.Plan(ctx, want)
				if err != nil {
					return err
				}
				for _, u := range updates {
					fmt.Fprintln(cmd.OutOrStdout(), s.Describe(u))
				}
				fmt.Fprintf(cmd.OutOrStdout(), "dry run, nothing written: %v\n", plan)
				return nil
			}
			done, err := s.Reconcile(ctx, want)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %v\n", args[0], done)
			return nil
		},
	}
	sf = addSwitchFlags(cmd)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would change, write nothing")
	return cmd
}

// near is path as written when it exists, else relative to the file
// that names it.
func near(file, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	if _, err := os.Stat(path); err == nil {
		return path
	}
	return filepath.Join(filepath.Dir(file), path)
}
