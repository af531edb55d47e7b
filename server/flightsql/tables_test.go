package flightsql

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// listing is a Backend that lists names and refuses, as ListFlights does,
// to send more than limit of them.
type listing struct {
	names []string
	limit int
}

func (l listing) Plan(context.Context, *scandv1.ScanRequest) (*flight.FlightInfo, error) {
	return nil, errors.New("not planned here")
}

func (l listing) PlanCount(context.Context, *scandv1.ScanRequest) (int64, *flight.FlightInfo, error) {
	return 0, nil, errors.New("not planned here")
}

func (l listing) PlanExtremes(context.Context, *scandv1.ScanRequest, []string) (map[string]Bounds, *flight.FlightInfo, error) {
	return nil, nil, errors.New("not planned")
}

func (l listing) Table(context.Context, string) (bool, error) { return false, nil }

func (l listing) Read(context.Context, []byte, func(arrow.RecordBatch) error) error {
	return errors.New("not read here")
}

func (l listing) List(_ context.Context, _ string, fn func(string) error) error {
	for i, n := range l.names {
		if i >= l.limit {
			return fmt.Errorf("more than %d files", l.limit)
		}
		if err := fn(n); err != nil {
			if errors.Is(err, ErrStopList) {
				return nil
			}
			return err
		}
	}
	return nil
}

// TestTables: tables are the top-level directories and data files, and a
// root larger than the bound lists the tables of its first files instead
// of failing.
func TestTables(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"a.parquet", "b/x.parquet", "b/y/z.parquet", "c.orc", "d/e.orc", "s3://b/k.parquet"}, "[a.parquet b c.orc d]"},
		{nil, "[]"},
	} {
		s := &Server{be: listing{names: tc.names, limit: MaxListedFiles}}
		got, err := s.tables(context.Background())
		if err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("tables of %v = %v, %v; want %s", tc.names, got, err, tc.want)
		}
	}
	var many []string
	for i := 0; i < 2*MaxListedFiles; i++ {
		many = append(many, fmt.Sprintf("t%05d/part.parquet", i/1000))
	}
	s := &Server{be: listing{names: many, limit: MaxListedFiles}}
	got, err := s.tables(context.Background())
	if err != nil || len(got) != MaxListedFiles/1000 {
		t.Errorf("a root over the bound: %d tables, %v; want the %d of the first files", len(got), err, MaxListedFiles/1000)
	}
}

func TestLikeMatches(t *testing.T) {
	p := func(s string) *string { return &s }
	for _, tc := range []struct {
		pattern *string
		s       string
		want    bool
	}{
		{nil, "x", true}, {p(""), "x", true}, {p("tr%"), "trips", true}, {p("tr%"), "a.trips", false},
		{p("t_ips"), "trips", true}, {p("a.b"), "axb", false}, {p("%.parquet"), "x.parquet", true},
	} {
		if got := likeMatches(tc.pattern, tc.s); got != tc.want {
			t.Errorf("likeMatches(%v, %q) = %v", tc.pattern, tc.s, got)
		}
	}
}
