package tutorialjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"strings"
)

// Text is a value as written: a JSON string, or a JSON number's digits
// exactly, however long.
func Text(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&n); err != nil {
		return "", fmt.Errorf("want a number or a string, found %s", raw)
	}
	return n.String(), nil
}

// Bytes reads a value (decimal, 0x hex, dotted IPv4, colon MAC or IPv6)
// as the big-endian bytes of a field width bits wide, ceil(width/8) of
// them. A value that needs more bits than width is refused, naming both.
func Bytes(s string, width int) ([]byte, error) {
	n := (width + 7) / 8
	v, err := parse(s)
	if err != nil {
		return nil, err
	}
	if v.BitLen() > width {
		return nil, fmt.Errorf("%s needs %d bits; the field has %d", s, v.BitLen(), width)
	}
	return v.FillBytes(make([]byte, n)), nil
}

// parse reads a value as a non-negative integer.
func parse(s string) (*big.Int, error) {
	switch {
	case strings.Count(s, ".") == 3 && !strings.ContainsAny(s, "x:"):
		ip := net.ParseIP(s).To4()
		if ip == nil {
			return nil, fmt.Errorf("%q is not an IPv4 address", s)
		}
		return new(big.Int).SetBytes(ip), nil
	case strings.Count(s, ":") == 5 && !strings.Contains(s, "::"):
		mac, err := net.ParseMAC(s)
		if err != nil || len(mac) != 6 {
			return nil, fmt.Errorf("%q is not a MAC address", s)
		}
		return new(big.Int).SetBytes(mac), nil
	case strings.Contains(s, ":"):
		ip := net.ParseIP(s)
		if ip == nil || ip.To4() != nil && !strings.Contains(s, "::ffff:") {
			return nil, fmt.Errorf("%q is not an IPv6 address", s)
		}
		return new(big.Int).SetBytes(ip.To16()), nil
	}
	v, ok := new(big.Int).SetString(strings.ReplaceAll(s, "_", ""), 0)
	if !ok || v.Sign() < 0 {
		return nil, fmt.Errorf("%q is not a number, an IPv4, MAC or IPv6 address", s)
	}
	return v, nil
}

// Kind is how Format writes a value.
type Kind int

const (
	Number Kind = iota // a JSON number up to 2^53, a 0x hex string beyond
	IPv4               // dotted quad (32-bit fields)
	MAC                // colon-separated (48-bit fields)
	IPv6               // RFC 5952 text (128-bit fields)
)

// KindFor is how a field called name, width bits wide, is best written:
// addresses by the widths of IPv4 (when the name says address), MAC and
// IPv6, all else as numbers.
func KindFor(name string, width int) Kind {
	lower := strings.ToLower(name)
	switch {
	case width == 48 && (strings.Contains(lower, "mac") || strings.Contains(lower, "addr")):
		return MAC
	case width == 32 && (strings.Contains(lower, "addr") || strings.Contains(lower, "ip")):
		return IPv4
	case width == 128:
		return IPv6
	}
	return Number
}

// Format writes the big-endian value b as a runtime-file value of kind k.
func Format(b []byte, k Kind) json.RawMessage {
	v := new(big.Int).SetBytes(b)
	var s string
	switch k {
	case IPv4:
		s = net.IP(v.FillBytes(make([]byte, 4))).String()
	case MAC:
		s = net.HardwareAddr(v.FillBytes(make([]byte, 6))).String()
	case IPv6:
		s = net.IP(v.FillBytes(make([]byte, 16))).String()
	default:
		if v.BitLen() <= 53 {
			return json.RawMessage(strconv.FormatUint(v.Uint64(), 10))
		}
		s = "0x" + v.Text(16)
	}
	q, _ := json.Marshal(s)
	return q
}
