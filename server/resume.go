package server

import (
	"bytes"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server/stream"
)

// Resuming a stream at a row offset, like BigQuery's ReadRows(offset): a
// client whose stream broke after it received some rows asks any replica
// for a ticket of the same task that starts after them (the "resume"
// action), and redeems it on that replica. Tickets are signed, so the
// client cannot write skip_rows itself; the action verifies the old ticket
// for the caller and signs the new one.
//
// The rows are exactly the rest of the old stream's because the ticket
// pins the file's size and version (a changed file fails the DoGet with
// FAILED_PRECONDITION), the split's row groups and the filter, and
// decoding is deterministic: the task's output is the same sequence of
// rows on every replica. skip_rows counts that output (after the
// filter), so the stream drops exactly that many rows: whole row groups
// unread where metadata tells their output (no filter), then whole
// batches, then the front of the batch that straddles the offset.

// actionResume is the DoAction type of resumption.
const actionResume = "resume"

var resumeActionType = &flight.ActionType{
	Type: actionResume,
	Description: "Body: a scand.v1.ResumeRequest {ticket, offset} as binary protobuf or JSON. " +
		"Returns a ResumeResult (same encoding) whose ticket streams the task's rows after the first offset.",
}

// doResume answers the resume action: one ResumeResult.
func (s *Server) doResume(body []byte, stream flight.FlightService_DoActionServer) (err error) {
	defer recoverHandler(s.log, "DoAction resume", &err)
	ctx := stream.Context()
	c := s.callerOf(ctx)
	out, task, err := s.resume(c, body)
	path := ""
	if task != nil {
		path = task.Path
	}
	s.audit(ctx, "resume", c.id.Name, err, "path", path)
	if err != nil {
		return toStatus(err)
	}
	return stream.Send(&flight.Result{Body: out})
}

// resume decodes the request, checks the offset against the task and
// signs the resumed ticket; out is encoded as the request was.
func (s *Server) resume(c caller, body []byte) (out []byte, task *scandv1.ScanTask, err error) {
	req, asJSON, err := parseResume(body)
	if err != nil {
		return nil, nil, err
	}
	task, _, err = s.openTicket(c, req.Ticket)
	if err != nil {
		return nil, nil, err
	}
	if bound := resumeBound(task); req.Offset > bound {
		return nil, task, invalidf("resume offset %d is past the end of the task (%s row groups %v returns at most %d rows): "+
			"offset is the number of rows already received from the task's start", req.Offset, task.Path, task.RowGroups, bound)
	}
	task.SkipRows = req.Offset
	payload, err := proto.Marshal(task)
	if err != nil {
		return nil, task, err
	}
	// The new ticket gets a full lifetime: resuming needs a valid ticket
	// of the same identity, which may get fresh ones from GetFlightInfo
	// anyway, so it extends nothing the caller could not have.
	ep, err := s.signTicket(c.id.Name, payload)
	if err != nil {
		return nil, task, err
	}
	res := &scandv1.ResumeResult{Ticket: ep.Ticket.Ticket, ExpiresUnixMs: ep.ExpirationTime.AsTime().UnixMilli()}
	if asJSON {
		out, err = protojson.Marshal(res)
	} else {
		out, err = proto.Marshal(res)
	}
	return out, task, err
}

// parseResume reads a ResumeRequest, binary or JSON (as parseDescriptor
// tells them apart), and checks what needs no ticket.
func parseResume(body []byte) (req *scandv1.ResumeRequest, asJSON bool, err error) {
	req = &scandv1.ResumeRequest{}
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '{' {
		asJSON = true
		if jerr := protojson.Unmarshal(trimmed, req); jerr != nil {
			req.Reset()
			if proto.Unmarshal(body, req) != nil || len(req.Ticket) == 0 {
				return nil, false, invalidf("resume: body is not a valid JSON ResumeRequest: %v (fields: ticket, base64; offset)", jerr)
			}
			asJSON = false
		}
	} else if err := proto.Unmarshal(body, req); err != nil {
		return nil, false, invalidf("resume: body is neither JSON nor a binary ResumeRequest: %v", err)
	}
	switch {
	case len(req.Ticket) == 0:
		return nil, false, invalidf("resume: the request has no ticket: send {\"ticket\": <an endpoint's ticket, base64>, \"offset\": <rows received>}")
	case req.Offset < 0:
		return nil, false, invalidf("resume: offset must be >= 0 (the rows already received), got %d", req.Offset)
	}
	return req, asJSON, nil
}

// resumeBound is the most rows the task can return: its rows, or its
// limit when that is smaller. With a filter the task returns fewer; an
// offset past what it does return then yields an empty stream.
func resumeBound(task *scandv1.ScanTask) int64 {
	rows := stream.TaskRows(task) // every file's, for an endpoint of several
	if task.Limit > 0 && task.Limit < rows {
		return task.Limit
	}
	return rows
}
