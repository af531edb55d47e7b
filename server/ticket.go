package server

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/planner"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/wire"
)

// A ticket is a ScanTask the planner wrote (package planner: its columns
// as indexes into the file's column names, its schema delta, its
// fingerprint), signed; the stream decodes it and rebuilds the scan's
// schema with the planner's codec (planner.SelectedColumns,
// planner.ApplyDelta), then checks it against the fingerprint.

// decodeTicket reads a DoGet ticket and its compression.
func decodeTicket(b []byte) (*scandv1.ScanTask, wire.Compression, error) {
	task := &scandv1.ScanTask{}
	if err := proto.Unmarshal(b, task); err != nil || task.Path == "" {
		return nil, 0, invalidf("ticket is not a scand ScanTask: pass the tickets of GetFlightInfo's endpoints unchanged")
	}
	if err := checkMore(task); err != nil {
		return nil, 0, err
	}
	comp, err := wire.ParseCompression(task.Compression)
	if err != nil {
		return nil, 0, invalidf("ticket: %v", err)
	}
	return task, comp, nil
}

// checkStreamSchema fails with INTERNAL, before the stream sends
// anything, when the schema it rebuilt for its current file is not the
// one its ticket says was planned (once per stream when an endpoint's
// files rebuild one schema). The ticket carries the plan's
// fingerprint, not its schema (tickets carry no schema): the message
// names the stream's schema and both fingerprints; the planned schema is
// the FlightInfo's.
func (st *stream) checkStreamSchema() error {
	want := st.task.GetSchemaFingerprint()
	if want == 0 {
		return nil // a ticket written by hand
	}
	if st.checked != nil && planner.SchemasEqual(st.schema, st.checked) {
		return nil // the schema of the endpoint's file before, checked
	}
	if got := planner.SchemaFingerprint(st.schema); got != want {
		return &planner.SchemaMismatchError{Path: st.task.GetPath(), Stream: fmt.Sprintf("%s (fingerprint %016x)", planner.DescribeSchema(st.schema), got),
			Planned: fmt.Sprintf("a schema of fingerprint %016x", want)}
	}
	st.checked = st.schema
	return nil
}
