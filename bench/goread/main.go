// Command goread is the Go client reader of the benchmark suite's
// throughput experiment (bench/suite/exp_throughput.py): it scans once with
// package client (its defaults: endpoints read concurrently, ahead of the
// consumer), drops the batches as they arrive, and prints one JSON line
// with the rows, the wall time and the CPU time of the scan itself.
//
//	goread -server grpc://127.0.0.1:8815 -request '{"paths": ["tput/"]}' [-cpuprofile FILE]
//
// The CPU time is getrusage(RUSAGE_SELF) around the scan, so the process's
// start-up is not counted; the suite divides it by the data set's Arrow
// bytes, the same figure for every reader.
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

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

type result struct {
	Rows       int64   `json:"rows"`
	Batches    int64   `json:"batches"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
}

func main() {
	server := flag.String("server", "grpc://127.0.0.1:8815", "scand address")
	request := flag.String("request", "", "the ScanRequest as JSON")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the scan to this file")
	flag.Parse()
	if *cpuprofile != "" {
		stop, err := profile(*cpuprofile)
		if err != nil {
			fail("%v", err)
		}
		defer stop()
	}
	req := &scandv1.ScanRequest{}
	if err := protojson.Unmarshal([]byte(*request), req); err != nil {
		fail("request: %v", err)
	}
	r, err := scan(context.Background(), *server, req)
	if err != nil {
		fail("%v", err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fail("%v", err)
	}
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

func scan(ctx context.Context, server string, req *scandv1.ScanRequest) (result, error) {
	c, err := client.Dial(ctx, server)
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	cpu0, t0 := cpuSeconds(), time.Now()
	s, err := c.Scan(ctx, req)
	if err != nil {
		return result{}, err
	}
	defer s.Release()
	var r result
	for s.Next() {
		r.Rows += s.RecordBatch().NumRows()
		r.Batches++
	}
	if err := s.Err(); err != nil {
		return result{}, err
	}
	r.Seconds, r.CPUSeconds = time.Since(t0).Seconds(), cpuSeconds()-cpu0
	return r, nil
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "goread: "+format+"\n", args...)
	os.Exit(1)
}
