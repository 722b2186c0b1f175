//go:build !linux

package finetimer

import "time"

// sleep is the runtime's own elsewhere.
func sleep(d time.Duration) { time.Sleep(d) }
