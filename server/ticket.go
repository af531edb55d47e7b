package server

import (
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server/stream"
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
	if err := stream.CheckMore(task); err != nil {
		return nil, 0, err
	}
	comp, err := wire.ParseCompression(task.Compression)
	if err != nil {
		return nil, 0, invalidf("ticket: %v", err)
	}
	return task, comp, nil
}
