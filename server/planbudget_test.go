package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/planner/planmem"
)

// Planning is charged to the planning share: a footer whose decoded size
// is more than the whole share is RESOURCE_EXHAUSTED naming the setting,
// before it is decoded; plans within it succeed, concurrent ones wait
// for each other, and everything is given back when they answer.
func TestPlanningChargedToShare(t *testing.T) {
	dir := t.TempDir()
	rec := wideRecord(3000, 10)
	writeParquet(t, dir, "wide.parquet", rec, 10)
	rec.Release()
	small := wideRecord(4, 10)
	for i := range 40 {
		writeParquet(t, dir, fmt.Sprintf("many/f%02d.parquet", i), small, 10)
	}
	small.Release()

	tiny := planmem.New(1<<20, "--io-plan-memory")
	_, addr := serveForTest(t, onRoot(t, dir, iosched.Options{}, Config{PlanMemory: tiny}))
	c := dialForTest(t, addr)
	_, err := c.GetFlightInfo(context.Background(), &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"wide.parquet"}})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--io-plan-memory") {
		t.Fatalf("3,000 columns in a 1 MiB planning share: %v, want RESOURCE_EXHAUSTED naming --io-plan-memory", err)
	}

	share := planmem.New(16<<20, "--io-plan-memory")
	_, addr = serveForTest(t, onRoot(t, dir, iosched.Options{}, Config{PlanMemory: share}))
	c = dialForTest(t, addr)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "wide.parquet"
			if i%2 == 1 {
				path = "many/"
			}
			if _, err := c.GetFlightInfo(context.Background(), &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{path}}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("plan within the share: %v", err)
	}
	st := share.Stats()
	if st.Used != 0 || st.Plans != 0 {
		t.Errorf("after every plan answered: %+v, want nothing charged", st)
	}
	if st.Peak == 0 || st.Peak > st.Capacity {
		t.Errorf("peak %d, want within (0, %d]", st.Peak, st.Capacity)
	}
}
