package client

import (
	"time"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// TableRequest is the scan request of a table: a Delta table's location (the
// directory holding _delta_log/) or an Iceberg table's location or metadata
// file, relative to the server's root or a store URI (s3://bucket/warehouse/
// sales), read as of the snapshot that at most one [Snapshot] chooses (none:
// the latest). The server tells the kind of table by what the location
// holds, reads its log or metadata, applies its deletes and names columns as
// the table does.
//
// Set Columns, the filter (RowFilter) and Limit on the returned request as
// for files, then pass it to [Client.Scan]:
//
//	req := client.TableRequest("warehouse/sales", client.AtVersion(12))
//	req.Columns = []string{"region", "amount"}
//	req.RowFilter = &scandv1.ScanRequest_Filter{Filter: "amount > 100"}
//	scan, err := c.Scan(ctx, req)
//
// More than one Snapshot is refused by the server (INVALID_ARGUMENT).
func TableRequest(location string, snapshot ...Snapshot) *scandv1.ScanRequest {
	req := &scandv1.ScanRequest{Table: location}
	for _, s := range snapshot {
		s(req)
	}
	return req
}

// Snapshot chooses the snapshot of a table that [TableRequest] reads.
type Snapshot func(*scandv1.ScanRequest)

// AtVersion reads a Delta table at version v (0 is the table's first
// commit).
func AtVersion(v int64) Snapshot {
	return func(r *scandv1.ScanRequest) { r.Version = &v }
}

// AtSnapshotID reads an Iceberg table's snapshot by its id.
func AtSnapshotID(id int64) Snapshot {
	return func(r *scandv1.ScanRequest) { r.SnapshotId = id }
}

// AtRef reads the snapshot an Iceberg branch or tag names.
func AtRef(name string) Snapshot {
	return func(r *scandv1.ScanRequest) { r.Ref = name }
}

// AsOf reads a table as it was at t: a Delta table's newest version
// committed at or before t, an Iceberg table's snapshot current then.
func AsOf(t time.Time) Snapshot {
	return func(r *scandv1.ScanRequest) { r.AsOf = t.UTC().Format(time.RFC3339Nano) }
}
