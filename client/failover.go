package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// Failover. scand lists each endpoint's locations owner first, and any
// replica serves any ticket (they are signed with a shared key), so a
// location is a preference. An endpoint is read from its first location;
// when that replica is unavailable (it is down, draining, or the
// connection broke) the endpoint moves to the next one, and after the
// last location to the client's own server.
//
// A move before the first batch simply redeems the ticket there. After
// batches have arrived the rows already handed to the reader must not come
// again: the client asks the next replica, with the "resume" action, for
// a ticket of the same task that skips them, and reads on from there. The
// server guarantees the rest is exact (the ticket pins the file's version;
// a file that changed fails with FAILED_PRECONDITION). When no replica
// can resume, the scan fails with an error that says how many rows of the
// endpoint arrived and why it could not go on.

// readEndpoint reads endpoint i into st from its candidates in turn.
func (s *Scan) readEndpoint(i int, st *stream) error {
	ep := s.info.GetEndpoint()[i]
	reps, err := s.c.pool.candidates(ep)
	if err != nil {
		return err
	}
	var tried []string // "addr (why)" of each replica given up on
	var broke error    // the last stream error that caused a move
	for _, r := range reps {
		ticket := ep.GetTicket()
		if st.rows > 0 {
			ticket, err = resumeOn(s.ctx, r, ep.GetTicket(), st.rows)
			if err != nil && failsOver(s.ctx, err) {
				tried = append(tried, fmt.Sprintf("%s (resume: %s)", r.addr, status.Convert(err).Message()))
				continue
			}
			if err != nil {
				return cannotResume(i, st.rows, broke, fmt.Sprintf("the resume action on %s failed: %v", r.addr, err))
			}
			st.failovers++
		} else if broke != nil {
			st.failovers++
		}
		err := s.readFrom(r, ticket, i, st)
		if err == nil || !failsOver(s.ctx, err) {
			return err
		}
		broke = err
		tried = append(tried, fmt.Sprintf("%s (%s)", r.addr, status.Convert(err).Message()))
	}
	if st.rows > 0 && len(tried) <= 1 {
		return cannotResume(i, st.rows, broke, "the endpoint lists no other replica to resume on")
	}
	if st.rows > 0 {
		return cannotResume(i, st.rows, broke, "no replica was left to resume on; tried "+strings.Join(tried, ", "))
	}
	return everyLocationFailed(i, broke, tried)
}

// failsOver says err is worth another replica: UNAVAILABLE, which gRPC
// reports for a refused or broken connection and scand for a draining
// replica. Any other code is the request's or the data's problem, which
// another replica would repeat; a cancelled scan moves nowhere.
func failsOver(ctx context.Context, err error) bool {
	return ctx.Err() == nil && status.Code(err) == codes.Unavailable
}

// resumeOn asks r for a ticket of the same task as ticket that skips its
// first offset rows.
func resumeOn(ctx context.Context, r *replica, ticket *flight.Ticket, offset int64) (*flight.Ticket, error) {
	body, err := proto.Marshal(&scandv1.ResumeRequest{Ticket: ticket.GetTicket(), Offset: offset})
	if err != nil {
		return nil, fmt.Errorf("client: encode ResumeRequest: %w", err)
	}
	stream, err := r.fc.DoAction(ctx, &flight.Action{Type: "resume", Body: body})
	if err != nil {
		return nil, wrapAt(ctx, "resume", r.addr, err)
	}
	res, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("client: resume: %s sent no result", r.addr)
	}
	if err != nil {
		return nil, wrapAt(ctx, "resume", r.addr, err)
	}
	if err := flight.ReadUntilEOF(stream); err != nil {
		return nil, wrapAt(ctx, "resume", r.addr, err)
	}
	out := &scandv1.ResumeResult{}
	if err := proto.Unmarshal(res.GetBody(), out); err != nil || len(out.GetTicket()) == 0 {
		return nil, fmt.Errorf("client: resume: %s answered something that is not a ResumeResult", r.addr)
	}
	return &flight.Ticket{Ticket: out.GetTicket()}, nil
}

// cannotResume is the error of an endpoint that broke after rows arrived
// and could not go on exactly. It keeps the stream's code (UNAVAILABLE).
func cannotResume(i int, rows int64, broke error, why string) error {
	e := asError(broke)
	return &Error{Op: "scan", Addr: e.Addr, Code: e.Code, err: broke, failover: true, Message: fmt.Sprintf(
		"endpoint %d: its stream broke after %d rows had arrived (%s), and it cannot resume exactly: %s",
		i, rows, e.Message, why)}
}

// everyLocationFailed is the error of an endpoint no replica would start.
func everyLocationFailed(i int, broke error, tried []string) error {
	if len(tried) <= 1 {
		return broke // the plain error of the one server there was
	}
	e := asError(broke)
	return &Error{Op: "scan", Addr: e.Addr, Code: e.Code, err: broke, failover: true, Message: fmt.Sprintf(
		"endpoint %d: no replica could serve it; tried %s", i, strings.Join(tried, ", "))}
}

// asError is err as an *Error (wrapAt makes every gRPC error one).
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: status.Code(err), Message: fmt.Sprint(err), err: err}
}
