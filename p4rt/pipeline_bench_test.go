package p4rt

import (
	"crypto/sha256"
	"testing"

	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/v1model"
)

// BenchmarkNewPipelineRCM is what a switch does with rcm.p4 when a
// controller sets it (SetForwardingPipelineConfig): the BMv2 JSON
// decoded and compiled, the P4Info resolved against it. A fabric's
// first apply does it once per switch. "first" is a process's first
// switch given the program (the cache of decoded programs emptied before
// each), "again" every other switch of the process given the same one
// (p4switch --group), which compiles the document decoded for the first.
func BenchmarkNewPipelineRCM(b *testing.B) {
	info, err := p4.P4Info()
	if err != nil {
		b.Fatal(err)
	}
	js := p4.DeviceConfig()
	for _, c := range []struct {
		name  string
		empty bool
	}{{"first", true}, {"again", false}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(js)))
			b.ReportAllocs()
			for b.Loop() {
				if c.empty {
					if d := decoded.cached(js); d != nil {
						decoded.forget(sha256.Sum256(js), d)
					}
				}
				if _, err := newPipeline(info, js, nil, v1model.Config{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
