package workload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// psPerSecond is the number of picoseconds in a second.
const psPerSecond = 1_000_000_000_000

// ParseNS3Flows reads a flow file in the ns-3 RDMA simulator's format (the
// HPCC paper's): the first line is the number of flows, then one line per
// flow,
//
//	src dst priority_group dst_port size_bytes start_seconds
//
// for example "13 6 3 100 24375 2.000000962". filename labels the errors. isHost, if not nil, says which node IDs are
// hosts (for example a topology's); a src or dst for which it returns false
// is an error. With a nil isHost any non-negative node ID is accepted.
//
// The flows keep the order of the file and get IDs 0..n-1 by line order;
// they are deliberately not sorted, so that IDs match the file's flow
// numbering (sort them yourself if you need Start order). Start times are
// converted from the decimal seconds exactly, without going through a
// float64: 2.000000962 s is 2000000962000 ps; digits finer than a
// picosecond must be zero. Class is left empty.
//
// Every error names the file, the line and the field: a count that does
// not match the flow lines, a non-numeric field, a size that is not
// positive, src equal to dst, an unknown host, a priority outside 0..7 or a
// port outside 0..65535. Blank lines are ignored.
func ParseNS3Flows(r io.Reader, filename string, isHost func(node int) bool) ([]Flow, error) {
	if filename == "" {
		filename = "flows"
	}
	sc := bufio.NewScanner(r)
	line := 0
	count, countLine := -1, 0
	var flows []Flow
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if count < 0 {
			if len(f) != 1 {
				return nil, fmt.Errorf("%s:%d: want the flow count alone on the first line, got %d fields", filename, line, len(f))
			}
			n, err := strconv.Atoi(f[0])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s:%d: flow count %q: not a non-negative whole number", filename, line, f[0])
			}
			count, countLine = n, line
			flows = make([]Flow, 0, min(n, 1<<20)) // the count is not trusted with memory
			continue
		}
		if len(flows) == count {
			return nil, fmt.Errorf("%s:%d: more flow lines than the count %d on line %d", filename, line, count, countLine)
		}
		fl, err := parseNS3Flow(f, isHost)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", filename, line, err)
		}
		fl.ID = len(flows)
		flows = append(flows, fl)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", filename, line+1, err)
	}
	if count < 0 {
		return nil, fmt.Errorf("%s: empty: want the flow count on the first line", filename)
	}
	if len(flows) != count {
		return nil, fmt.Errorf("%s:%d: the count on line %d says %d flows, the file has %d", filename, line, countLine, count, len(flows))
	}
	return flows, nil
}

// parseNS3Flow parses the fields of one flow line; errors name the field.
func parseNS3Flow(f []string, isHost func(int) bool) (Flow, error) {
	if len(f) != 6 {
		return Flow{}, fmt.Errorf("want 6 fields \"src dst priority_group dst_port size_bytes start_seconds\", got %d", len(f))
	}
	node := func(field, s string) (int, error) {
		v, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("%s %q: not a whole number", field, s)
		}
		if v < 0 {
			return 0, fmt.Errorf("%s %d: node ID is negative", field, v)
		}
		if isHost != nil && !isHost(v) {
			return 0, fmt.Errorf("%s %d: not a host", field, v)
		}
		return v, nil
	}
	var fl Flow
	var err error
	if fl.Src, err = node("src", f[0]); err != nil {
		return Flow{}, err
	}
	if fl.Dst, err = node("dst", f[1]); err != nil {
		return Flow{}, err
	}
	if fl.Src == fl.Dst {
		return Flow{}, fmt.Errorf("dst %d: same as src: a flow needs two different hosts", fl.Dst)
	}
	if fl.Priority, err = strconv.Atoi(f[2]); err != nil {
		return Flow{}, fmt.Errorf("priority_group %q: not a whole number", f[2])
	}
	if fl.Priority < 0 || fl.Priority > 7 {
		return Flow{}, fmt.Errorf("priority_group %d: must be 0..7", fl.Priority)
	}
	if fl.DstPort, err = strconv.Atoi(f[3]); err != nil {
		return Flow{}, fmt.Errorf("dst_port %q: not a whole number", f[3])
	}
	if fl.DstPort < 0 || fl.DstPort > 65535 {
		return Flow{}, fmt.Errorf("dst_port %d: must be 0..65535", fl.DstPort)
	}
	if fl.Size, err = strconv.ParseInt(f[4], 10, 64); err != nil {
		return Flow{}, fmt.Errorf("size_bytes %q: not a whole number of bytes", f[4])
	}
	if fl.Size <= 0 {
		return Flow{}, fmt.Errorf("size_bytes %d: must be positive", fl.Size)
	}
	if fl.Start, err = ParseSeconds(f[5]); err != nil {
		return Flow{}, fmt.Errorf("start_seconds %q: %v", f[5], err)
	}
	return fl, nil
}

// ParseSeconds converts a decimal number of seconds, such as "2.000000962"
// or "1.5e-3", to picoseconds exactly, working on the digits rather than
// through a float64 (whose 2.000000962 is off by a fraction of a
// picosecond, which rounding might or might not repair). Digits finer than
// a picosecond must be zero; negative times are rejected.
func ParseSeconds(s string) (int64, error) {
	mant, expText, hasExp := strings.Cut(strings.ToLower(s), "e")
	mant = strings.TrimPrefix(mant, "+")
	if strings.HasPrefix(mant, "-") {
		return 0, errors.New("negative time")
	}
	intPart, fracPart, _ := strings.Cut(mant, ".")
	digits := intPart + fracPart
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, errors.New("not a decimal number of seconds")
	}
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expText)
		if err != nil || e < -1000 || e > 1000 {
			return 0, errors.New("bad exponent")
		}
		exp = e
	}
	// value = digits * 10^(exp - len(fracPart)) seconds
	//       = digits * 10^shift picoseconds.
	shift := exp - len(fracPart) + 12
	if shift < 0 {
		cut := len(digits) + shift // digits before the cut are whole picoseconds
		if strings.Trim(digits[max(cut, 0):], "0") != "" {
			return 0, errors.New("finer than a picosecond")
		}
		digits = digits[:max(cut, 0)]
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return 0, nil
	}
	if shift > 0 {
		if len(digits)+shift > 19 { // more than 19 digits cannot fit an int64
			return 0, errors.New("too large for int64 picoseconds")
		}
		digits += strings.Repeat("0", shift)
	}
	ps, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, errors.New("too large for int64 picoseconds")
	}
	return ps, nil
}

// FormatSeconds writes picoseconds as decimal seconds, with 9 decimals
// when the time is a whole number of nanoseconds and 12 otherwise, so that
// ParseSeconds gives back the same picoseconds (for times that are not
// negative, the only ones ParseSeconds accepts).
func FormatSeconds(ps int64) string {
	sign, mag := "", uint64(ps)
	if ps < 0 {
		sign, mag = "-", -uint64(ps) // two's complement: right for MinInt64 too
	}
	sec, frac := mag/psPerSecond, mag%psPerSecond
	if frac%1000 == 0 {
		return fmt.Sprintf("%s%d.%09d", sign, sec, frac/1000)
	}
	return fmt.Sprintf("%s%d.%012d", sign, sec, frac)
}

// WriteNS3Flows writes flows in the ns-3 RDMA simulator's format (see
// ParseNS3Flows), in the given order. IDs and Class are not part of the
// format and are not written. It refuses flows that ParseNS3Flows would
// reject (src equal to dst, a size that is not positive, a negative start,
// a priority outside 0..7 or a port outside 0..65535), naming the flow.
func WriteNS3Flows(w io.Writer, flows []Flow) error {
	for i, f := range flows {
		var err error
		switch {
		case f.Src < 0 || f.Dst < 0:
			err = fmt.Errorf("node ID is negative (%d -> %d)", f.Src, f.Dst)
		case f.Src == f.Dst:
			err = fmt.Errorf("src and dst are both %d", f.Src)
		case f.Size <= 0:
			err = fmt.Errorf("size %d: must be positive", f.Size)
		case f.Start < 0:
			err = fmt.Errorf("start %d ps: must not be negative", f.Start)
		case f.Priority < 0 || f.Priority > 7:
			err = fmt.Errorf("priority %d: must be 0..7", f.Priority)
		case f.DstPort < 0 || f.DstPort > 65535:
			err = fmt.Errorf("dst port %d: must be 0..65535", f.DstPort)
		}
		if err != nil {
			return fmt.Errorf("workload: WriteNS3Flows: flow %d (ID %d): %v", i, f.ID, err)
		}
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d\n", len(flows))
	for _, f := range flows {
		fmt.Fprintf(bw, "%d %d %d %d %d %s\n", f.Src, f.Dst, f.Priority, f.DstPort, f.Size, FormatSeconds(f.Start))
	}
	return bw.Flush()
}
