// Command goread is the Go client reader of the benchmarks
// (bench/suite/exp_throughput.py, bench/msgsize): it scans with package
// client (its defaults: endpoints read concurrently, ahead of the
// consumer), drops the batches as they arrive, and prints one JSON line per
// scan with the rows, batches, Arrow bytes, wall time, CPU time and minor
// page faults of the scan itself.
//
//	goread -server grpc://127.0.0.1:8815 -request '{"paths": ["tput/"]}'
//	       [-max-message-bytes N] [-turns K] [-cpuprofile FILE]
//
// The CPU time and faults are getrusage(RUSAGE_SELF) around each scan, so
// the process's start-up and the dial are not counted.
//
// With -compare it measures the Go client's receive path instead, and
// prints a table:
//
//	go run ./bench/goread -compare [-rows 2000000] [-turns 5] [-dir DIR] [-python PATH] [-cpuprofile FILE]
//
// It writes two Parquet files ("wide": 8 int64 and 8 float64 columns;
// "strings": 3 string columns of words, about as many bytes), serves them
// from a child process (this program with -serve), and scans each one
// -turns times with each client, the clients taking turns scan by scan:
// the Go client gathering each message into one buffer
// (client.WithGatheringReceive), the Go client building batches from
// gRPC's receive buffers (its default), and a stock pyarrow.flight
// client (pyclient.py, run with -python, by default
// <repo>/.venv/bin/python; -python - skips it). Each row is the client
// process's CPU seconds (user+system) per GB of Arrow data received, the
// median over the turns, its ratio to pyarrow's, the range, minor page
// faults per GB and throughput. -cpuprofile profiles this process (the Go
// clients) over the measured turns.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

type result struct {
	Rows    int64   `json:"rows"`
	Batches int64   `json:"batches"`
	Bytes   int64   `json:"bytes"` // Arrow buffer bytes, as pyarrow's nbytes counts unsliced batches
	Wall    float64 `json:"wall"`
	CPU     float64 `json:"cpu"`
	Faults  int64   `json:"faults"` // minor page faults during the scan
}

func main() {
	server := flag.String("server", client.DefaultAddr, "scand address")
	request := flag.String("request", "", "the ScanRequest as JSON")
	maxMsg := flag.Int64("max-message-bytes", client.DefaultMaxMessageBytes, "max_message_bytes the client sends (0: none)")
	turns := flag.Int("turns", 1, "scans to run, one JSON line each")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the scans to this file")
	cmp := flag.Bool("compare", false, "compare the Go client's receive paths and pyarrow's client (a table)")
	dir := flag.String("dir", "", "-compare: where to write the Parquet files (default: a temporary directory)")
	rows := flag.Int("rows", 2_000_000, "-compare: rows of the wide file")
	python := flag.String("python", "", "-compare: python with pyarrow (default <repo>/.venv/bin/python; - skips it)")
	serveRoot := flag.String("serve", "", "serve this directory (the -compare server child; internal)")
	flag.Parse()
	if *serveRoot != "" {
		if err := serve(*serveRoot); err != nil {
			fail("%v", err)
		}
		return
	}
	if *cmp {
		if err := compare(*dir, *rows, *turns, *python, *cpuprofile); err != nil {
			fail("%v", err)
		}
		return
	}
	req := &scandv1.ScanRequest{}
	if err := protojson.Unmarshal([]byte(*request), req); err != nil {
		fail("request: %v", err)
	}
	if *cpuprofile != "" {
		stop, err := profile(*cpuprofile)
		if err != nil {
			fail("%v", err)
		}
		defer stop()
	}
	if err := run(context.Background(), *server, req, *maxMsg, *turns); err != nil {
		fail("%v", err)
	}
}

func run(ctx context.Context, server string, req *scandv1.ScanRequest, maxMsg int64, turns int) error {
	c, err := client.Dial(ctx, server, client.WithMaxMessageBytes(maxMsg))
	if err != nil {
		return err
	}
	defer c.Close()
	enc := json.NewEncoder(os.Stdout)
	for range turns {
		r, err := scanOnce(ctx, c, req)
		if err != nil {
			return err
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func scanOnce(ctx context.Context, c *client.Client, req *scandv1.ScanRequest) (result, error) {
	ru0, t0 := usage(), time.Now()
	s, err := c.Scan(ctx, req)
	if err != nil {
		return result{}, err
	}
	defer s.Release()
	var r result
	for s.Next() {
		rec := s.RecordBatch()
		r.Rows += rec.NumRows()
		r.Bytes += recordBytes(rec)
		r.Batches++
	}
	if err := s.Err(); err != nil {
		return result{}, err
	}
	ru := usage()
	r.Wall, r.CPU, r.Faults = time.Since(t0).Seconds(), cpuSeconds(ru)-cpuSeconds(ru0), ru.Minflt-ru0.Minflt
	return r, nil
}

func usage() syscall.Rusage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // zeros on failure: the figures read 0
	return ru
}

func cpuSeconds(ru syscall.Rusage) float64 {
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, col := range rec.Columns() {
		n += dataBytes(col.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	return n
}

func profile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "goread: "+format+"\n", args...)
	os.Exit(1)
}
