package controlplane

import (
	"context"
	"fmt"
	"io"
	"strings"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// BatchSize is the most updates one WriteRequest carries.
const BatchSize = 1000

// Write sends updates in batches of up to BatchSize, stopping at the
// first batch with a failure. The switch applies each update of a batch
// on its own (P4Runtime's CONTINUE_ON_ERROR), so a failed batch may have
// applied some: the error, a *WriteError, says which updates failed and
// why, and its status is that of the first failure.
func (s *Session) Write(ctx context.Context, updates ...*p4v1.Update) error {
	if s.Reader() {
		return &WriteError{Status: status.Convert(errReader)}
	}
	for start := 0; start < len(updates); start += BatchSize {
		batch := updates[start:min(start+BatchSize, len(updates))]
		req := &p4v1.WriteRequest{DeviceId: s.deviceID, Role: s.role, ElectionId: s.electionProto(), Updates: batch}
		if _, err := s.c.P4RuntimeClient.Write(ctx, req); err != nil {
			return writeError(err, batch, start)
		}
	}
	return nil
}

// WriteError is a write the switch refused, in whole (Failures empty:
// the status says why, PERMISSION_DENIED for a backup) or in part.
type WriteError struct {
	Status   *status.Status
	Failures []UpdateFailure
}

// UpdateFailure is one refused update: its index among those given to
// Write, the update, and the switch's code and message.
type UpdateFailure struct {
	Index   int
	Update  *p4v1.Update
	Code    codes.Code
	Message string
}

func (e *WriteError) Error() string {
	if len(e.Failures) == 0 {
		return fmt.Sprintf("%s: %s", CodeName(e.Status.Code()), e.Status.Message())
	}
	var b strings.Builder
	for i, f := range e.Failures {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e.Failures)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "update %d (%s): %s: %s", f.Index, f.Update.Type, CodeName(f.Code), f.Message)
	}
	return b.String()
}

// CodeName is a status code as P4Runtime's specification and its
// servers' logs write it: ALREADY_EXISTS, not AlreadyExists.
func CodeName(c codes.Code) string {
	if n, ok := code.Code_name[int32(c)]; ok {
		return n
	}
	return c.String()
}

// GRPCStatus makes status.Code and status.Convert see the first failed
// update's status.
func (e *WriteError) GRPCStatus() *status.Status {
	if len(e.Failures) > 0 {
		return status.New(e.Failures[0].Code, e.Failures[0].Message)
	}
	return e.Status
}

// writeError unpacks a failed Write: P4Runtime answers UNKNOWN with one
// p4.v1.Error per update in the details.
func writeError(err error, batch []*p4v1.Update, offset int) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	we := &WriteError{Status: st}
	if st.Code() == codes.Unknown {
		i := 0
		for _, d := range st.Details() {
			e, ok := d.(*p4v1.Error)
			if !ok {
				continue
			}
			if codes.Code(e.CanonicalCode) != codes.OK && i < len(batch) {
				we.Failures = append(we.Failures, UpdateFailure{Index: offset + i, Update: batch[i],
					Code: codes.Code(e.CanonicalCode), Message: e.Message})
			}
			i++
		}
	}
	return we
}

// read reads what matches e (a wildcard or one entity), calling each for
// every entity of the answer.
func (s *Session) read(ctx context.Context, e *p4v1.Entity, each func(*p4v1.Entity)) error {
	rc, err := s.c.Read(ctx, &p4v1.ReadRequest{DeviceId: s.deviceID, Entities: []*p4v1.Entity{e}})
	if err != nil {
		return err
	}
	for {
		resp, err := rc.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		for _, x := range resp.Entities {
			each(x)
		}
	}
}

// upsert inserts e, or modifies it if it already exists.
func (s *Session) upsert(ctx context.Context, e *p4v1.Entity) error {
	err := s.Write(ctx, &p4v1.Update{Type: Insert, Entity: e})
	if status.Code(err) == codes.AlreadyExists {
		err = s.Write(ctx, &p4v1.Update{Type: Modify, Entity: e})
	}
	return err
}
