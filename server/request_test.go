package server

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

func TestParseDescriptor(t *testing.T) {
	bin, _ := proto.Marshal(&scandv1.ScanRequest{Paths: []string{"a.parquet"}, Columns: []string{"x"}, Limit: 5})
	long := strings.Repeat("p", 123) // encodes as "\n{ppp...", which looks like JSON
	binJSONish, _ := proto.Marshal(&scandv1.ScanRequest{Paths: []string{long}})
	tests := []struct {
		name    string
		d       *flight.FlightDescriptor
		want    *scandv1.ScanRequest
		wantErr bool
	}{
		// Binary protobuf begins with '\n' (field 1's tag), which must not
		// be mistaken for whitespace.
		{"binary", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: bin},
			&scandv1.ScanRequest{Paths: []string{"a.parquet"}, Columns: []string{"x"}, Limit: 5}, false},
		{"binary that looks like JSON", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: binJSONish},
			&scandv1.ScanRequest{Paths: []string{long}}, false},
		{"json", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(` {"paths": ["a.parquet"], "columns": ["x"], "limit": 5}`)},
			&scandv1.ScanRequest{Paths: []string{"a.parquet"}, Columns: []string{"x"}, Limit: 5}, false},
		{"json camel case", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": ["a"], "batchRows": 7, "split_bytes": 9}`)},
			&scandv1.ScanRequest{Paths: []string{"a"}, BatchRows: 7, SplitBytes: 9}, false},
		{"path", &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"a", "b"}},
			&scandv1.ScanRequest{Paths: []string{"a", "b"}}, false},
		{"nil", nil, nil, true},
		{"empty command", &flight.FlightDescriptor{Type: flight.DescriptorCMD}, nil, true},
		{"bad json", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": [1]}`)}, nil, true},
		{"unknown json field", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": ["a"], "where": "x"}`)}, nil, true},
		{"garbage", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte{0xff, 0xff, 0xff}}, nil, true},
		{"no paths", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"columns": ["a"]}`)}, nil, true},
		{"empty column", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": ["a"], "columns": [""]}`)}, nil, true},
		{"negative batch rows", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": ["a"], "batch_rows": -1}`)}, nil, true},
		{"table", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table": "t", "version": 3}`)},
			&scandv1.ScanRequest{Table: "t", Version: proto.Int64(3)}, false},
		{"table as of", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table": "s3://b/t", "as_of": "2026-11-30T12:00:00+01:00"}`)},
			&scandv1.ScanRequest{Table: "s3://b/t", AsOf: "2026-11-30T12:00:00+01:00"}, false},
		{"table and paths", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table": "t", "paths": ["a"]}`)}, nil, true},
		{"version and as_of", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table": "t", "version": 1, "as_of": "2026-11-30T12:00:00Z"}`)}, nil, true},
		{"as_of not RFC 3339", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table": "t", "as_of": "yesterday"}`)}, nil, true},
		{"negative version", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table": "t", "version": -1}`)}, nil, true},
		{"version without a table", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": ["a"], "version": 1}`)}, nil, true},
		{"iceberg snapshot", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table": "t", "snapshot_id": 5}`)},
			&scandv1.ScanRequest{Table: "t", SnapshotId: 5}, false},
		{"snapshot and ref", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table": "t", "snapshot_id": 5, "ref": "main"}`)}, nil, true},
		{"snapshot without a table", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": ["a"], "snapshot_id": 5}`)}, nil, true},
		{"table with a negative limit", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table": "t", "limit": -1}`)}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDescriptor(tt.d)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && !proto.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
