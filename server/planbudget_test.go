package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/planner/planmem"
	"github.com/scand/scand/source/iceberg/icebergtest"
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

// A Delta table's log is read while planning, and charged to the planning
// share like a footer: a commit larger than the whole share is refused
// before it is read, and a plan within the share gives everything back.
func TestDeltaLogChargedToPlanningShare(t *testing.T) {
	root := t.TempDir()
	writeDeltaDVTable(t, root, "t", []uint64{1}, false, false)
	// A second commit of 2 MiB: a commitInfo the reader skips, padded.
	pad, err := json.Marshal(map[string]any{"commitInfo": map[string]any{"operation": "WRITE", "note": strings.Repeat("x", 2<<20)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "t", "_delta_log", "00000000000000000001.json"), append(pad, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table": "t"}`)}

	planRefused(t, root, desc, 1<<20) // a 2 MiB commit in a 1 MiB share
	info, st := planWithin(t, root, desc, 16<<20)
	if len(info.Endpoint) == 0 {
		t.Errorf("no endpoint planned for the table")
	}
	if st.Peak < 2<<20 {
		t.Errorf("peak %d bytes: the 2 MiB commit was not charged", st.Peak)
	}
}

// planRefused plans desc on a server of root with a planning share of
// capacity bytes, which must be refused, RESOURCE_EXHAUSTED naming
// --io-plan-memory, with nothing left charged; it returns the refusal.
func planRefused(t *testing.T, root string, desc *flight.FlightDescriptor, capacity int64) error {
	t.Helper()
	share := planmem.New(capacity, "--io-plan-memory")
	_, addr := serveForTest(t, onRoot(t, root, iosched.Options{}, Config{PlanMemory: share}))
	_, err := dialForTest(t, addr).GetFlightInfo(context.Background(), desc)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--io-plan-memory") {
		t.Fatalf("a planning share of %d bytes: %v, want RESOURCE_EXHAUSTED naming --io-plan-memory", capacity, err)
	}
	if st := share.Stats(); st.Used != 0 {
		t.Errorf("after the refusal: %+v, want nothing charged", st)
	}
	return err
}

// planWithin plans desc on a server of root with a planning share of
// capacity bytes, which must succeed and give everything back; it
// returns the plan and the share's figures.
func planWithin(t *testing.T, root string, desc *flight.FlightDescriptor, capacity int64) (*flight.FlightInfo, planmem.Stats) {
	t.Helper()
	share := planmem.New(capacity, "--io-plan-memory")
	_, addr := serveForTest(t, onRoot(t, root, iosched.Options{}, Config{PlanMemory: share}))
	info, err := dialForTest(t, addr).GetFlightInfo(context.Background(), desc)
	if err != nil {
		t.Fatal(err)
	}
	st := share.Stats()
	if st.Used != 0 || st.Plans != 0 {
		t.Errorf("after the plan answered: %+v, want nothing charged", st)
	}
	return info, st
}

// An Iceberg table's metadata file and manifests are charged to the plan
// while the listing holds them, as a Delta log is: iceberg-go decodes a
// manifest's entries whole (about 21x its bytes), so a share too small
// for that is RESOURCE_EXHAUSTED naming --io-plan-memory, and a share
// that holds it sees the charge at its peak and nothing once answered.
func TestIcebergManifestsChargedToPlanningShare(t *testing.T) {
	root := t.TempDir()
	tbl, _ := icebergtest.NewTable(t, root, "wh/t", tableSchema, nil, nil)
	tbl = icebergtest.Append(t, tbl, tableArrow, tableRows(0, 100))
	icebergtest.Append(t, tbl, tableArrow, tableRows(100, 200))
	var biggest int64
	err := filepath.WalkDir(filepath.Join(root, "wh/t/metadata"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".avro") {
			return err
		}
		info, err := d.Info()
		if err == nil {
			biggest = max(biggest, info.Size())
		}
		return err
	})
	if err != nil || biggest == 0 {
		t.Fatalf("no manifest written (%v)", err)
	}
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table": "wh/t"}`)}

	if err := planRefused(t, root, desc, biggest*4); !strings.Contains(err.Error(), ".avro") {
		t.Errorf("a %d-byte manifest in a %d-byte planning share: %v, want the manifest named", biggest, biggest*4, err)
	}
	info, st := planWithin(t, root, desc, 16<<20)
	if info.TotalRecords != 200 {
		t.Errorf("planned %d rows, want 200", info.TotalRecords)
	}
	if st.Peak < 20*biggest {
		t.Errorf("peak %d bytes: the %d-byte manifest's decoding was not charged", st.Peak, biggest)
	}
}
