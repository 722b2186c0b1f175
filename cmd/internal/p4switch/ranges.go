package p4switch

import (
	"fmt"
	"math"
)

// settingRange is the largest a traffic-manager setting may be, from the
// command line or the control socket: past it a value is a slip (1e308
// bits per second, a delay of a century), which the switch refuses
// rather than take as "no limit" or overflow its clock with.
type settingRange struct {
	max  float64
	unit string
}

var settingRanges = map[string]settingRange{
	"port rate":          {1e13, "bits per second (10 Tb/s)"},
	"queue rate":         {1e10, "packets per second"},
	"recirculation rate": {1e10, "packets per second"},
	"port delay":         {3600, "seconds (an hour)"},
	"queue depth":        {1 << 20, "packets"},
}

// inRange refuses a setting that is not a number from 0 to its range's
// largest.
func inRange(what string, v float64) error {
	r := settingRanges[what]
	if math.IsNaN(v) || v < 0 || v > r.max {
		return fmt.Errorf("%s %g: want 0 to %g %s", what, v, r.max, r.unit)
	}
	return nil
}
