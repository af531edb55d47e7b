package flightsql

import (
	"testing"

	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// TestIsCommand: Flight SQL's commands and tickets go to the front door;
// scand's requests (JSON or protobuf) and tickets (signed envelopes) do
// not.
func TestIsCommand(t *testing.T) {
	tkt, err := fsql.CreateStatementQueryTicket([]byte(`{"sql":"SELECT 1"}`))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := proto.Marshal(&scandv1.ScanRequest{Paths: []string{"a.parquet"}, Columns: []string{"x"}})
	env, _ := proto.Marshal(&scandv1.SignedEnvelope{Version: 1, KeyId: "k", Claims: []byte("c"), Mac: []byte("m")})
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"statement ticket", tkt, true},
		{"scan request", req, false},
		{"json request", []byte(`{"paths": ["a.parquet"]}`), false},
		{"signed ticket", env, false},
		{"empty", nil, false},
		{"garbage", []byte{0x0a, 0xff}, false},
	} {
		if got := IsCommand(tc.b); got != tc.want {
			t.Errorf("%s: IsCommand = %v, want %v", tc.name, got, tc.want)
		}
	}
}
