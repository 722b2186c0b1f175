//go:build linux

package netlab

import (
	"testing"
)

// TestLinkConfiguration checks settings that are only visible from inside
// a namespace: IPv6 off in the host (and on the switch-side end, without
// touching the root namespace's own settings) and tx checksum offload off.
func TestLinkConfiguration(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("network lab not available: %v", err)
	}
	var rootAllBefore string
	lab, err := New("nli")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := inNetns(lab.root, func() (err error) {
		rootAllBefore, err = readSysctl("net/ipv6/conf/all/disable_ipv6")
		return err
	}); err != nil {
		t.Skipf("no IPv6 sysctls here: %v", err)
	}
	h, err := lab.Host("a")
	if err != nil {
		t.Fatal(err)
	}
	lk, err := lab.Link(h, "eth0", nil)
	if err != nil {
		t.Fatal(err)
	}

	check := func(where string, want map[string]string, ifName string) {
		t.Helper()
		for key, v := range want {
			got, err := readSysctl(key)
			if err != nil || got != v {
				t.Errorf("%s: %s = %q, %v; want %q", where, key, got, err, v)
			}
		}
		on, err := txChecksumEnabled(ifName)
		if err != nil || on {
			t.Errorf("%s: tx checksum offload on %s = %v, %v; want off", where, ifName, on, err)
		}
	}
	if err := inNetns(h.ns, func() error {
		check("host", map[string]string{
			"net/ipv6/conf/all/disable_ipv6":     "1",
			"net/ipv6/conf/default/disable_ipv6": "1",
			"net/ipv6/conf/eth0/disable_ipv6":    "1",
		}, "eth0")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := inNetns(lab.root, func() error {
		check("root", map[string]string{
			"net/ipv6/conf/all/disable_ipv6":                 rootAllBefore,
			"net/ipv6/conf/" + lk.SwitchIf + "/disable_ipv6": "1",
		}, lk.SwitchIf)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
