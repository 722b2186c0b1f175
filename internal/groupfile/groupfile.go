// Package groupfile is the file p4switch --group reads, which the
// harness that starts a group (package bmv2) writes: the switches one
// process runs, each with the command line a p4switch of its own would
// take.
package groupfile

// File is a group: its switches, in order.
type File struct {
	Switches []Switch `json:"switches"`
}

// Switch is one switch of a group: a name, for messages and the
// output's prefix, and its p4switch arguments (without the program's
// name).
type Switch struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
}
