// Package labtest decides what a test that needs network namespaces and
// veths does on a machine without them: it skips, saying why, unless the
// environment requires them (RequireEnv=1, which CI's .ci/run sets), in
// which case it fails. A machine that should run the tests on real
// packets then cannot pass by skipping them.
package labtest

import "testing"

// RequireEnv names the environment variable that, set to 1, makes a
// test fail where it would skip for want of namespaces.
const RequireEnv = "P4RCM_REQUIRE_NETNS"

// decide skips or fails t for unavailable, the reason namespaces cannot
// be had (nil: they can, and t goes on).
func decide(t testing.TB, unavailable error, required bool) {
	t.Helper()
	switch {
	case unavailable == nil:
	case required:
		t.Fatalf("%s=1 requires network namespaces and veths, which this test cannot have: %v", RequireEnv, unavailable)
	default:
		t.Skip(unavailable)
	}
}
