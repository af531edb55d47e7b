package stream

import (
	"fmt"

	"github.com/scand/scand/planner"
)

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
