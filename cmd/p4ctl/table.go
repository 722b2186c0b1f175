package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/tutorialjson"
	"github.com/spf13/cobra"
)

func newTableCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "table",
		Short: "List, dump, add, modify and delete table entries on a running switch",
		Long: `table reads and writes a running switch's tables over P4Runtime, with
matches and actions written as p4runtime-shell users write them:

  FIELD=VALUE             exact (or a full prefix, a full mask, LOW = HIGH)
  FIELD=VALUE/PREFIX      LPM
  FIELD=VALUE&&&MASK      ternary
  FIELD=LOW..HIGH         range
  NAME(PARAM=VALUE, ...)  an action and its parameters

Values are decimal, 0x hex, dotted IPv4, colon MAC or IPv6. Tables, fields
and actions may be named in full ("RcmIngress.ipv4_lpm") or by a unique
suffix ("ipv4_lpm", "dst_addr").`,
		Args: noArgs,
		RunE: needCommand,
	}
	cmd.AddCommand(newTableListCmd(), newTableDumpCmd(), newTableWriteCmd("add"), newTableWriteCmd("modify"), newTableWriteCmd("delete"))
	return cmd
}

func newTableListCmd() *cobra.Command {
	var sf *switchFlags
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the program's tables: match fields, actions and size",
		Example: `  p4ctl table list --addr 127.0.0.1:9559`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := sf.read(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			info, err := s.P4Info()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TABLE\tMATCH\tACTIONS\tSIZE")
			for _, t := range info.Tables {
				var fields, actions []string
				for _, f := range t.MatchFields {
					fields = append(fields, fmt.Sprintf("%s:%s/%d", f.Name, strings.ToLower(f.GetMatchType().String()), f.Bitwidth))
				}
				for _, ref := range t.ActionRefs {
					for _, a := range info.Actions {
						if a.Preamble.Id == ref.Id {
							actions = append(actions, a.Preamble.Name)
						}
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", t.Preamble.Name, strings.Join(fields, " "), strings.Join(actions, " "), t.Size)
			}
			return tw.Flush()
		},
	}
	sf = addReadFlags(cmd)
	return cmd
}

func newTableDumpCmd() *cobra.Command {
	var sf *switchFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "dump [TABLE...]",
		Short: "Print the entries of tables (all of them if none is named)",
		Long: `dump prints each entry as 'table add' takes it, one per line, with the
table's default action last; --json prints a runtime file in the p4lang
tutorials' format that 'p4ctl apply' installs again.`,
		Example: `  p4ctl table dump ipv4_lpm
  p4ctl table dump --json > s1-runtime.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := sf.read(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			return dumpTables(cmd, s, args, asJSON)
		},
	}
	sf = addReadFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a runtime file (table_entries) instead of lines")
	return cmd
}

func dumpTables(cmd *cobra.Command, s *controlplane.Session, names []string, asJSON bool) error {
	ctx := cmd.Context()
	info, err := s.P4Info()
	if err != nil {
		return err
	}
	var tables []*p4configv1.Table
	if len(names) == 0 {
		tables = info.Tables
	}
	for _, n := range names {
		t, err := s.Table(n)
		if err != nil {
			return err
		}
		tables = append(tables, t)
	}
	rt := &tutorialjson.Runtime{Target: "bmv2"}
	out := cmd.OutOrStdout()
	for _, t := range tables {
		entries, err := s.ReadEntries(ctx, t.Preamble.Name)
		if err != nil {
			return err
		}
		slices.SortFunc(entries, func(a, b controlplane.Entry) int { return strings.Compare(s.FormatEntry(a), s.FormatEntry(b)) })
		if t.ConstDefaultActionId == 0 && t.ImplementationId == 0 {
			d, err := s.ReadDefault(ctx, t.Preamble.Name)
			if err != nil {
				return err
			}
			entries = append(entries, d)
		}
		for _, e := range entries {
			if !asJSON {
				fmt.Fprintln(out, s.FormatEntry(e))
				continue
			}
			re, err := s.RuntimeEntry(e)
			if err != nil {
				return err
			}
			rt.Entries = append(rt.Entries, re)
		}
	}
	if !asJSON {
		return nil
	}
	b, err := rt.Marshal()
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// newTableWriteCmd is table add, modify or delete.
func newTableWriteCmd(verb string) *cobra.Command {
	var sf *switchFlags
	var action string
	var priority int
	var isDefault bool
	short := map[string]string{
		"add":    "Insert an entry",
		"modify": "Change the action of an entry, or a table's default action (--default)",
		"delete": "Remove an entry, or reset a table's default action (--default)",
	}[verb]
	example := map[string]string{
		"add": `  p4ctl table add ipv4_lpm dst_addr=10.0.1.0/24 --action 'set_nexthop(port=2, src_mac=02:00:00:00:01:02, dst_mac=02:00:00:00:00:02)'
  p4ctl table add red_config egress_port=2 --action 'set_red(kmin_bytes=5000, kmax_bytes=200000, pmax_slope=214748, wred_k_bytes=0, buf_max_bytes=0)'`,
		"modify": `  p4ctl table modify ipv4_lpm dst_addr=10.0.1.0/24 --action 'set_nexthop(port=3, src_mac=02:00:00:00:01:03, dst_mac=02:00:00:00:00:03)'
  p4ctl table modify ipv4_lpm --default --action drop`,
		"delete": `  p4ctl table delete ipv4_lpm dst_addr=10.0.1.0/24`,
	}[verb]
	cmd := &cobra.Command{
		Use:     verb + " TABLE [FIELD=VALUE...]",
		Short:   short,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("name the table; see '%s --help'", cmd.CommandPath())
			}
			if verb != "delete" && action == "" {
				return usageErrorf("--action is required: NAME or NAME(PARAM=VALUE, ...)")
			}
			if isDefault && len(args) > 1 {
				return usageErrorf("--default takes no matches: a default entry has none")
			}
			s, err := sf.openPrimary(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			if len(args) == 1 && !isDefault {
				if err := needMatch(s, verb, args[0]); err != nil {
					return err
				}
			}
			e, err := s.ParseEntry(args[0], args[1:], action, priority)
			if err != nil {
				// Checked against the program before anything is sent:
				// the command line is wrong (exit 2), the switch as it was.
				return usageErrorf("%s", statusText(err))
			}
			e.Default = isDefault
			return writeEntry(cmd.Context(), s, verb, e)
		},
	}
	sf = addSwitchFlags(cmd)
	fs := cmd.Flags()
	if verb != "delete" {
		fs.StringVar(&action, "action", "", "the action: NAME or NAME(PARAM=VALUE, ...)")
	}
	fs.IntVar(&priority, "priority", 0, "the entry's priority (tables with ternary, range or optional fields; higher wins)")
	if verb != "add" {
		fs.BoolVar(&isDefault, "default", false, "the table's default entry")
	}
	return cmd
}

// needMatch refuses an entry of table given with no match, where the
// table has match fields: P4Runtime takes it as the entry that matches
// everything (an LPM of /0, every ternary bit masked off), which is
// seldom what a command line without a match means.
func needMatch(s *controlplane.Session, verb, table string) error {
	t, err := s.Table(table)
	if err != nil {
		return usageErrorf("%s", statusText(err))
	}
	if len(t.MatchFields) == 0 {
		return nil
	}
	var fields []string
	for _, f := range t.MatchFields {
		fields = append(fields, fmt.Sprintf("%s (%s)", f.Name, strings.ToLower(f.GetMatchType().String())))
	}
	return usageErrorf("table %s %s: no match given; %s matches on %s: give FIELD=VALUE (an entry for every key is an explicit one, such as %s), or --default for the table's default action",
		verb, table, t.Preamble.Name, strings.Join(fields, ", "), wildcard(t.MatchFields[0]))
}

// wildcard is a match of f that takes every value, as the command line
// writes it.
func wildcard(f *p4configv1.MatchField) string {
	name := f.Name[strings.LastIndex(f.Name, ".")+1:]
	switch f.GetMatchType() {
	case p4configv1.MatchField_LPM:
		if f.Bitwidth == 32 {
			return name + "=0.0.0.0/0"
		}
		return name + "=0/0"
	case p4configv1.MatchField_TERNARY:
		return name + "=0&&&0"
	case p4configv1.MatchField_RANGE:
		return fmt.Sprintf("%s=0..%d", name, uint64(1)<<min(f.Bitwidth, 63)-1)
	}
	return name + "=VALUE"
}

func writeEntry(ctx context.Context, s *controlplane.Session, verb string, e controlplane.Entry) error {
	switch verb {
	case "add":
		return s.InsertEntry(ctx, e)
	case "modify":
		return s.ModifyEntry(ctx, e)
	default:
		return s.DeleteEntry(ctx, e)
	}
}
