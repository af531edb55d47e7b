package client

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// The message is "<CODE_NAME>: <server message>" without a repeated code,
// and a hint only where the status calls for one. client/python's
// test_errors.py checks the same cases against the Python client.
func TestErrorMessageAndHint(t *testing.T) {
	tests := []struct {
		name      string
		code      codes.Code
		msg       string
		want      string
		wantHint  string
		addr      string
		unreached bool
	}{
		{name: "code not repeated", code: codes.InvalidArgument, msg: "open a.csv: invalid argument",
			want: "INVALID_ARGUMENT: open a.csv"},
		{name: "code words inside the message stay", code: codes.InvalidArgument, msg: "invalid argument: x",
			want: "INVALID_ARGUMENT: invalid argument: x"},
		{name: "typo hint from the file's columns", code: codes.InvalidArgument,
			msg:      `unknown column "fair"; available columns: id, fare, city`,
			want:     `INVALID_ARGUMENT: unknown column "fair"; available columns: id, fare, city`,
			wantHint: `did you mean "fare"?`},
		{name: "nested example from the file", code: codes.InvalidArgument,
			msg:      `unknown column "zzzzzz"; available columns: id, loc.x, loc.y and 3 more`,
			want:     `INVALID_ARGUMENT: unknown column "zzzzzz"; available columns: id, loc.x, loc.y and 3 more`,
			wantHint: `nested fields are named by their path, as "loc.x"`},
		{name: "no column near, none nested: no hint", code: codes.InvalidArgument,
			msg:  `unknown column "zzzzzz"; available columns: id, fare`,
			want: `INVALID_ARGUMENT: unknown column "zzzzzz"; available columns: id, fare`},
		{name: "other invalid argument: no generic hint", code: codes.InvalidArgument, msg: "limit must not be negative",
			want: "INVALID_ARGUMENT: limit must not be negative"},
		{name: "not found", code: codes.NotFound, msg: `no file matches "a/*"`, want: `NOT_FOUND: no file matches "a/*"`,
			wantHint: "paths are relative to the server's --root; check the name or the glob"},
		{name: "object store not found: no --root hint", code: codes.NotFound,
			msg:      `gcs: stat gs://b/x.parquet: bucket "b" does not exist: HTTP 404`,
			want:     `NOT_FOUND: gcs: stat gs://b/x.parquet: bucket "b" does not exist: HTTP 404`,
			wantHint: "check the bucket (or container) and the object name; the message says which is missing"},
		{name: "internal: no hint", code: codes.Internal, msg: "boom", want: "INTERNAL: boom"},
		{name: "unreachable", code: codes.Unavailable, msg: "connection error: refused", addr: "h:1", unreached: true,
			want:     "UNAVAILABLE: scand at h:1 is not reachable: connection error: refused",
			wantHint: "is `scand serve` running there? Check the address and port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Error{Op: "plan scan", Addr: tt.addr, Code: tt.code, Message: tt.msg}
			if e.Unreachable() != tt.unreached {
				t.Fatalf("Unreachable() = %v", e.Unreachable())
			}
			if got := e.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if got := e.Hint(); got != tt.wantHint {
				t.Errorf("Hint() = %q, want %q", got, tt.wantHint)
			}
		})
	}
}
