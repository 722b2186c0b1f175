// Package proccpu reads the CPU time a process or thread has used, from
// Linux's /proc, for benchmarks that charge software switches and agents
// with their CPU.
package proccpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

// Stat is the user and system CPU time in a /proc stat file
// (/proc/PID/stat, /proc/self/task/TID/stat); 0 if it cannot be read.
func Stat(path string) time.Duration {
	if path == "" {
		return 0
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0
	}
	fields := strings.Fields(s[i+2:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseUint(fields[11], 10, 64)
	st, _ := strconv.ParseUint(fields[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// Process is a process's CPU time so far.
func Process(pid int) time.Duration { return Stat(fmt.Sprintf("/proc/%d/stat", pid)) }
