// Command goread is bench/msgsize's Go reader: it scans the given paths
// (and columns) through the scand Go client, turns times, each with
// client.WithMaxMessageBytes(-max), and prints one JSON line a turn: rows,
// Arrow bytes received, batches, wall seconds and this process's CPU
// seconds (user + system) during the scan. bench/msgsize/run.py runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

type turn struct {
	Rows    int64   `json:"rows"`
	Bytes   int64   `json:"bytes"`
	Batches int64   `json:"batches"`
	Wall    float64 `json:"wall"`
	CPU     float64 `json:"cpu"`
	Faults  int64   `json:"faults"` // minor page faults during the scan
}

func main() {
	addr := flag.String("addr", client.DefaultAddr, "scand server")
	paths := flag.String("paths", "", "comma-separated paths to scan")
	maxMsg := flag.Int64("max", client.DefaultMaxMessageBytes, "max_message_bytes (0: send none)")
	turns := flag.Int("turns", 1, "scans to run")
	columns := flag.String("columns", "", "comma-separated columns (empty: all)")
	flag.Parse()
	req := &scandv1.ScanRequest{Paths: strings.Split(*paths, ",")}
	if *columns != "" {
		req.Columns = strings.Split(*columns, ",")
	}
	if err := run(*addr, req, *maxMsg, *turns); err != nil {
		fmt.Fprintln(os.Stderr, "goread:", err)
		os.Exit(1)
	}
}

func run(addr string, req *scandv1.ScanRequest, maxMsg int64, turns int) error {
	ctx := context.Background()
	c, err := client.Dial(ctx, addr, client.WithMaxMessageBytes(maxMsg))
	if err != nil {
		return err
	}
	defer c.Close()
	enc := json.NewEncoder(os.Stdout)
	for range turns {
		t, err := scanOnce(ctx, c, req)
		if err != nil {
			return err
		}
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	return nil
}

func scanOnce(ctx context.Context, c *client.Client, req *scandv1.ScanRequest) (turn, error) {
	cpu0, faults0, start := cpuSeconds(), minorFaults(), time.Now()
	scan, err := c.Scan(ctx, req)
	if err != nil {
		return turn{}, err
	}
	defer scan.Release()
	var t turn
	for scan.Next() {
		rec := scan.RecordBatch()
		t.Rows += rec.NumRows()
		t.Bytes += recordBytes(rec)
		t.Batches++
	}
	if err := scan.Err(); err != nil {
		return turn{}, err
	}
	t.Wall, t.CPU, t.Faults = time.Since(start).Seconds(), cpuSeconds()-cpu0, minorFaults()-faults0
	return t, nil
}

func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	return sec(ru.Utime) + sec(ru.Stime)
}

// recordBytes is the size of rec's buffers, as pyarrow's nbytes counts
// them for unsliced batches.
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
