package main

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// failServer plans one endpoint whose DoGet fails before its first batch,
// as a file that does not decode does.
type failServer struct {
	flight.BaseFlightServer
}

func (failServer) GetFlightInfo(ctx context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, memory.DefaultAllocator),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: []byte("t")}}},
		TotalRecords:     3,
	}, nil
}

func (failServer) DoGet(*flight.Ticket, flight.FlightService_DoGetServer) error {
	return status.Error(codes.Unimplemented, "a.parquet: no support for reading columns of type duration")
}

// A scan that fails before its first batch prints no empty table and no
// "(0 rows)" above the error, in every text format, and exits 1.
func TestScanFailingBeforeFirstBatchPrintsNothing(t *testing.T) {
	srv := flight.NewServerWithMiddleware(nil)
	if err := srv.Init("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	srv.RegisterFlightService(&failServer{})
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve() }()
	defer func() { srv.Shutdown(); <-done }()
	addr := "grpc://" + srv.Addr().String()
	for _, format := range []string{formatTable, formatCSV, formatJSON} {
		t.Run(format, func(t *testing.T) {
			e, stdout, stderr := testEnv(nil)
			code := run(context.Background(), []string{"scan", "--server", addr, "--format", format, "a.parquet"}, e)
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if stdout.String() != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			want := "scand: UNIMPLEMENTED: a.parquet: no support for reading columns of type duration\n"
			if stderr.String() != want {
				t.Errorf("stderr = %q, want %q", stderr, want)
			}
		})
	}
}
