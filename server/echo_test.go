package server

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Names a client sends come back in messages cut at 4 KiB, so that the
// status fits a client's trailers (8 KiB in gRPC C++ and pyarrow): an
// unknown action named with 12,000 characters is INVALID_ARGUMENT with
// a short message.
func TestEchoedNamesAreCut(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 10)
	writeParquet(t, dir, "d/a.parquet", rec, 10)
	rec.Release()
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	stream, err := c.DoAction(ctx, &flight.Action{Type: strings.Repeat("x", 12_000)})
	if err == nil {
		_, err = stream.Recv()
	}
	if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || len(s.Message()) > 4<<10+200 ||
		!strings.Contains(s.Message(), "this server has: version, resume") {
		t.Errorf("unknown action of 12,000 bytes: %v, %d bytes; want InvalidArgument within 4 KiB and the list of actions", s.Code(), len(s.Message()))
	}
	// A path segment no file system allows is the request's fault.
	for _, p := range []string{strings.Repeat("a", 300) + ".parquet", "d/" + strings.Repeat("b", 300) + "/x.parquet", strings.Repeat("c", 300) + "/*.parquet"} {
		_, err := scanJSON(ctx, c, map[string]any{"paths": []string{p}})
		if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), "longer than the file system allows") {
			t.Errorf("path of a 300-byte segment: %v, want InvalidArgument", err)
		}
	}
	ls, err := c.ListFlights(ctx, &flight.Criteria{Expression: []byte(strings.Repeat("d", 300) + "/")})
	if err == nil {
		for err == nil {
			_, err = ls.Recv()
		}
		if err == io.EOF {
			err = nil
		}
	}
	if status.Code(err) != codes.InvalidArgument && err != nil {
		t.Errorf("ListFlights of a 300-byte segment: %v, want InvalidArgument or nothing listed", err)
	}
}
