package p4rt

import (
	"testing"

	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/v1model"
)

// BenchmarkNewPipelineRCM is what a switch does with rcm.p4 when a
// controller sets it (SetForwardingPipelineConfig): the BMv2 JSON
// decoded and compiled, the P4Info resolved against it. A fabric's
// first apply does it once per switch.
func BenchmarkNewPipelineRCM(b *testing.B) {
	info, err := p4.P4Info()
	if err != nil {
		b.Fatal(err)
	}
	js := p4.DeviceConfig()
	b.SetBytes(int64(len(js)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newPipeline(info, js, nil, v1model.Config{}); err != nil {
			b.Fatal(err)
		}
	}
}
