package server

import (
	"bytes"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/wire"
)

// Limits on one request, so that a single client cannot make the server
// list or open without end.
const (
	maxPaths   = 10_000
	maxFiles   = 10_000
	maxColumns = 10_000
)

// parseDescriptor reads the ScanRequest a descriptor carries: a command
// holding binary protobuf or JSON, or a path list meaning all columns.
func parseDescriptor(d *flight.FlightDescriptor) (*scandv1.ScanRequest, error) {
	if d == nil {
		return nil, invalidf("missing flight descriptor: send a command holding a ScanRequest (JSON or protobuf) or a path descriptor")
	}
	req := &scandv1.ScanRequest{}
	switch d.Type {
	case flight.DescriptorPATH:
		req.Paths = append(req.Paths, d.Path...)
	case flight.DescriptorCMD:
		if len(d.Cmd) == 0 {
			return nil, invalidf("empty command: send a ScanRequest, for example {\"paths\": [\"data/*.parquet\"], \"columns\": [\"a\"]}")
		}
		// JSON starts with '{' after optional whitespace. Binary protobuf
		// must not be trimmed: its first byte is often '\n', the tag of
		// field 1.
		// A binary request can also look like JSON ("\n{" starts one whose
		// first path is 123 bytes long), so JSON that fails to parse is
		// tried as binary before giving up.
		if trimmed := bytes.TrimSpace(d.Cmd); len(trimmed) > 0 && trimmed[0] == '{' {
			if err := protojson.Unmarshal(trimmed, req); err != nil {
				req.Reset()
				if proto.Unmarshal(d.Cmd, req) != nil || (len(req.Paths) == 0 && req.Table == "") {
					return nil, invalidf("command is not a valid JSON ScanRequest: %v (fields: paths or table (with version or as_of), columns, limit, batch_rows, max_message_bytes, split_bytes, compression, filter)", err)
				}
			}
		} else if err := proto.Unmarshal(d.Cmd, req); err != nil {
			return nil, invalidf("command is neither JSON nor a binary ScanRequest: %v", err)
		}
	default:
		return nil, invalidf("unsupported descriptor type %v: use a command or a path descriptor", d.Type)
	}
	return req, validate(req)
}

func validate(req *scandv1.ScanRequest) error {
	if req.Table != "" {
		if err := validateTable(req); err != nil {
			return err
		}
	}
	switch {
	case req.Table == "" && (req.SnapshotId != 0 || req.Ref != "" || req.Version != nil || req.AsOf != ""):
		return invalidf("snapshot_id, ref, version and as_of choose a version of a table: name the table in \"table\"")
	case req.Table == "" && len(req.IcebergTasks) > 0:
		return invalidf("iceberg_tasks are tasks of an Iceberg table: name the table in \"table\"")
	case len(req.IcebergTasks) > maxPaths:
		return tooLargef("the request carries %d Iceberg tasks; at most %d are allowed per scan", len(req.IcebergTasks), maxPaths)
	case len(req.Paths) == 0 && req.Table == "":
		return invalidf("the request names no paths: set \"paths\" to files, globs or directories (ending in /)")
	case len(req.Paths) > maxPaths:
		return tooLargef("the request names %d paths; at most %d are allowed per scan (use a glob or a directory)", len(req.Paths), maxPaths)
	case len(req.Columns) > maxColumns:
		return tooLargef("the request names %d columns; at most %d are allowed", len(req.Columns), maxColumns)
	case req.Limit < 0:
		return invalidf("limit must be >= 0 (0 means no limit), got %d", req.Limit)
	case req.BatchRows < 0:
		return invalidf("batch_rows must be >= 0 (0 lets the server choose), got %d", req.BatchRows)
	case req.MaxMessageBytes < 0:
		return invalidf("max_message_bytes must be >= 0 (the largest Flight message the client accepts; 0 means gRPC's default 4 MiB), got %d", req.MaxMessageBytes)
	case req.SplitBytes < 0:
		return invalidf("split_bytes must be >= 0 (0 uses the server default), got %d", req.SplitBytes)
	}
	if _, err := wire.ParseCompression(req.Compression); err != nil {
		return invalidf("%v", err)
	}
	for _, p := range req.Paths {
		if strings.TrimSpace(p) == "" {
			return invalidf("paths must not be empty strings")
		}
	}
	for _, c := range req.Columns {
		if c == "" {
			return invalidf("column names must not be empty strings")
		}
	}
	return nil
}

// validateTable checks a request naming a table: no paths beside it, and
// at most one of snapshot_id, ref, version and as_of, well formed.
func validateTable(req *scandv1.ScanRequest) error {
	chosen := 0
	for _, set := range []bool{req.SnapshotId != 0, req.Ref != "", req.Version != nil, req.AsOf != ""} {
		if set {
			chosen++
		}
	}
	switch {
	case len(req.Paths) > 0:
		return invalidf("the request names both a table and paths: name one or the other")
	case chosen > 1:
		return invalidf("snapshot_id, ref, version and as_of each choose a version of the table: name at most one")
	case req.Version != nil && req.GetVersion() < 0:
		return invalidf("version must be >= 0, got %d", req.GetVersion())
	}
	if req.AsOf != "" {
		if _, err := time.Parse(time.RFC3339Nano, req.AsOf); err != nil {
			return invalidf("as_of %q is not an RFC 3339 time (\"2026-11-30T12:00:00Z\")", req.AsOf)
		}
	}
	return nil
}
