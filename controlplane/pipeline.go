package controlplane

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
)

// Pipeline is a program as P4Runtime installs it: its P4Info, the
// target's device configuration (for BMv2 and p4switch, the JSON
// p4c-bm2-ss writes) and a cookie that names this build of it.
type Pipeline struct {
	Info         *p4configv1.P4Info
	DeviceConfig []byte
	Cookie       uint64
}

// SetPipeline installs p on the switch (VERIFY_AND_COMMIT), which
// empties its tables, and makes p's P4Info the one names resolve in.
func (s *Session) SetPipeline(ctx context.Context, p Pipeline) error {
	if s.Reader() {
		return errReader
	}
	_, err := s.c.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId: s.deviceID, Role: s.role, ElectionId: s.electionProto(),
		Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: p.Info, P4DeviceConfig: p.DeviceConfig,
			Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: p.Cookie}},
	})
	if err != nil {
		return fmt.Errorf("set pipeline: %w", err)
	}
	return s.loadLibraryInfo(ctx, p.Info)
}

// loadLibraryInfo has the library read the switch's P4Info, in which its
// entry builders look names up, and makes info the session's.
func (s *Session) loadLibraryInfo(ctx context.Context, info *p4configv1.P4Info) error {
	if _, err := s.c.GetFwdPipe(ctx, client.GetFwdPipeP4InfoAndCookie); err != nil {
		return fmt.Errorf("get pipeline: %w", err)
	}
	s.setInfo(info)
	return nil
}

// GetPipeline reads the pipeline the switch runs: its P4Info, device
// configuration and cookie. A switch with none answers FAILED_PRECONDITION.
func (s *Session) GetPipeline(ctx context.Context) (*Pipeline, error) {
	return s.getPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_ALL)
}

func (s *Session) getPipeline(ctx context.Context, what p4v1.GetForwardingPipelineConfigRequest_ResponseType) (*Pipeline, error) {
	resp, err := s.c.GetForwardingPipelineConfig(ctx, &p4v1.GetForwardingPipelineConfigRequest{DeviceId: s.deviceID, ResponseType: what})
	if err != nil {
		return nil, fmt.Errorf("get pipeline: %w", err)
	}
	cfg := resp.GetConfig()
	if cfg == nil || cfg.GetP4Info() == nil && what != p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY {
		return nil, status.Errorf(codes.FailedPrecondition, "device %d at %s has no pipeline", s.deviceID, s.addr)
	}
	return &Pipeline{Info: cfg.GetP4Info(), DeviceConfig: cfg.GetP4DeviceConfig(), Cookie: cfg.GetCookie().GetCookie()}, nil
}

// RunningCookie is the cookie of the pipeline the switch runs; running
// is false for a switch that runs none (one just started, or restarted).
func (s *Session) RunningCookie(ctx context.Context) (cookie uint64, running bool, err error) {
	p, err := s.getPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY)
	switch {
	case status.Code(err) == codes.FailedPrecondition:
		return 0, false, nil
	case err != nil:
		return 0, false, err
	}
	return p.Cookie, true, nil
}

// AdoptPipeline takes the pipeline already on the switch as this
// session's, without touching its tables, when its cookie is cookie (0:
// any pipeline). A switch with no pipeline, or another cookie, is
// FAILED_PRECONDITION: the caller then sets its own.
func (s *Session) AdoptPipeline(ctx context.Context, cookie uint64) error {
	p, err := s.getPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE)
	if err != nil {
		return err
	}
	if cookie != 0 && p.Cookie != cookie {
		return status.Errorf(codes.FailedPrecondition, "device %d at %s runs pipeline cookie %#x, not %#x",
			s.deviceID, s.addr, p.Cookie, cookie)
	}
	return s.loadLibraryInfo(ctx, p.Info)
}

// EnsurePipeline adopts the switch's pipeline when it is p (by cookie;
// p.Cookie must be set) and installs p otherwise. It reports whether it
// installed it, which empties the switch's tables.
func (s *Session) EnsurePipeline(ctx context.Context, p Pipeline) (installed bool, err error) {
	if p.Cookie == 0 {
		return false, status.Error(codes.InvalidArgument, "a pipeline to adopt needs a cookie")
	}
	err = s.AdoptPipeline(ctx, p.Cookie)
	if status.Code(err) != codes.FailedPrecondition {
		return false, err
	}
	return true, s.SetPipeline(ctx, p)
}

func (s *Session) setInfo(info *p4configv1.P4Info) {
	s.mu.Lock()
	s.info = info
	s.mu.Unlock()
}

// P4Info is the pipeline's P4Info, or a FAILED_PRECONDITION error when
// the session has neither set nor adopted one.
func (s *Session) P4Info() (*p4configv1.P4Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.info == nil {
		return nil, status.Error(codes.FailedPrecondition, "no pipeline: set one or adopt the switch's")
	}
	return s.info, nil
}

// ReadPipeline reads the files p4c-bm2-ss writes, the P4Info in text
// format and the BMv2 JSON, as a pipeline with the given cookie (0: one
// computed from both files, so that a rebuilt program gets another).
func ReadPipeline(p4infoPath, jsonPath string, cookie uint64) (Pipeline, error) {
	text, err := os.ReadFile(p4infoPath)
	if err != nil {
		return Pipeline{}, err
	}
	info, err := ParseP4Info(text)
	if err != nil {
		return Pipeline{}, fmt.Errorf("%s: %w", p4infoPath, err)
	}
	device, err := os.ReadFile(jsonPath)
	if err != nil {
		return Pipeline{}, err
	}
	if cookie == 0 {
		cookie = Cookie(text, device)
	}
	return Pipeline{Info: info, DeviceConfig: device, Cookie: cookie}, nil
}

// ParseP4Info reads a P4Info in text format, leaving out fields this
// build's protos do not know (a newer p4c's).
func ParseP4Info(text []byte) (*p4configv1.P4Info, error) {
	info := &p4configv1.P4Info{}
	if err := (prototext.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(text, info); err != nil {
		return nil, err
	}
	return info, nil
}

// Cookie is a pipeline cookie for a program's files: FNV-1a of both, never 0.
func Cookie(files ...[]byte) uint64 {
	h := fnv.New64a()
	for _, f := range files {
		h.Write(f)
		h.Write([]byte{0xff}) // so that moving bytes between files changes it
	}
	return max(h.Sum64(), 1)
}
