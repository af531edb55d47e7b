package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/server/auth"
	"github.com/scand/scand/server/auth/scope"
	"github.com/scand/scand/server/limits"
	"github.com/scand/scand/server/ticketsign"
	"github.com/scand/scand/storage/storagetest"
)

// The global S3 allow-list narrows every scope: a bucket outside it is
// PERMISSION_DENIED by name and absent to a glob; a bucket inside reads.
// The in-memory bucket stands in for S3 (its names are full URIs).
func TestS3AllowList(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 100)
	writeParquet(t, dir, "a.parquet", rec, 50)
	rec.Release()
	data, err := os.ReadFile(filepath.Join(dir, "a.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	mem := storagetest.NewMem(map[string][]byte{"s3://allowed/t/a.parquet": data, "s3://denied/t/a.parquet": data})
	allow, err := scope.ParseS3AllowList([]string{"allowed/t"})
	if err != nil {
		t.Fatal(err)
	}
	c := testServerWith(t, Config{Bucket: mem, Security: Security{S3Allow: &allow}})
	ctx := context.Background()
	plan := func(path string) error {
		_, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": ["` + path + `"]}`)})
		return err
	}
	if err := plan("s3://denied/t/a.parquet"); status.Code(err) != codes.PermissionDenied ||
		!strings.Contains(err.Error(), `"s3://denied/t/a.parquet" is outside what identity "anonymous" may read`) {
		t.Errorf("bucket outside the allow-list: %v, want PermissionDenied naming it", err)
	}
	if err := plan("s3://denied/t/*.parquet"); status.Code(err) != codes.NotFound {
		t.Errorf("glob in a bucket outside the allow-list: %v, want NotFound", err)
	}
	res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"s3://allowed/t/*.parquet"}})
	if err != nil {
		t.Fatalf("bucket inside the allow-list: %v", err)
	}
	defer res.release()
	if res.rows() != 100 {
		t.Errorf("%d rows, want 100", res.rows())
	}
}

// GetFlightInfo calls over an identity's rate are RESOURCE_EXHAUSTED,
// naming the limit.
func TestFlightInfoRateLimit(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 10)
	writeParquet(t, dir, "a.parquet", rec, 10)
	rec.Release()
	c := testServerWith(t, onRoot(t, dir, iosched.Options{}, Config{Security: Security{FlightInfoRate: limits.NewRate("GetFlightInfo calls", 0.001, 1)}}))
	d := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": ["a.parquet"]}`)}
	if _, err := c.GetFlightInfo(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	_, err := c.GetFlightInfo(context.Background(), d)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "GetFlightInfo calls") || !strings.Contains(err.Error(), "anonymous") {
		t.Errorf("second call: %v, want ResourceExhausted naming the limit and the identity", err)
	}
}

// An expired ticket, and one signed with a key the server does not have,
// are UNAUTHENTICATED telling the client to plan again.
func TestExpiredAndUnknownKeyTickets(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 10)
	writeParquet(t, dir, "a.parquet", rec, 10)
	rec.Release()
	c := testServer(t, dir, memory.NewGoAllocator())
	ctx := context.Background()
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": ["a.parquet"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := proto.Marshal(openTestTicket(t, info.Endpoint[0].Ticket.Ticket))
	if err != nil {
		t.Fatal(err)
	}
	old, err := testSigner.WithClock(func() time.Time { return time.Now().Add(-time.Hour) }).
		Sign(ticketsign.KindTicket, auth.Anonymous.Name, payload, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := ticketsign.GenerateKeyRing()
	foreign, err := ticketsign.NewSigner(ring).Sign(ticketsign.KindTicket, auth.Anonymous.Name, payload, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for name, ticket := range map[string][]byte{"expired": old, "unknown key": foreign} {
		stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: ticket})
		for err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "GetFlightInfo again") {
			t.Errorf("%s ticket: %v, want Unauthenticated asking to call GetFlightInfo again", name, err)
		}
	}
}
