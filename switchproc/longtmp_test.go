package switchproc_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/switchproc"
)

// The Go target's control socket goes under TMPDIR; a TMPDIR too long
// for a Unix socket's path (107 bytes) must not stop the switch from
// starting and taking settings.
func TestGoTargetUnderALongTMPDIR(t *testing.T) {
	bin, err := p4switchbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p4switchbin.Cleanup)
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	port, thrift, err := switchproc.FreeSwitchPorts()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := switchproc.Start(ctx, switchproc.Config{Name: "s1", GRPCAddr: "127.0.0.1:" + strconv.Itoa(port), ThriftPort: thrift,
		Target: switchproc.TargetGo, Binary: bin})
	if err != nil {
		t.Fatalf("start under a TMPDIR of %d bytes: %v", len(long), err)
	}
	defer s.Stop()
	if err := s.SetQueueDepth(1, 64); err != nil {
		t.Errorf("a setting through the control socket: %v", err)
	}
}
