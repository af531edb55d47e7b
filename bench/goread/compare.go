package main

// The -compare mode: client CPU per GB of the Go client's receive paths
// and of a stock pyarrow.flight client, on the same streams of one server,
// turns interleaved, printed as a table.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/scand/scand/bench/internal/proc"
	"github.com/scand/scand/bench/internal/repo"
	"github.com/scand/scand/bench/internal/synth"
	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server"
	"github.com/scand/scand/storage/local"
)

// compareClient is one row of the table: how it scans a data set.
type compareClient struct {
	name string
	scan func(ds string) (result, error)
}

// compare writes the data sets under dir (unless there), serves them from
// a child process, and scans each with every client turns times, the
// clients taking turns scan by scan.
func compare(dir string, rows, turns int, python string, prof string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "goread")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	datasets := []string{"wide", "strings"}
	for _, ds := range datasets {
		p := filepath.Join(dir, ds+".parquet")
		if _, err := os.Stat(p); err == nil {
			continue
		}
		n := rows
		if ds == "strings" {
			n /= 4 // about as many bytes as wide
		}
		if err := synth.Write(p, ds, n); err != nil {
			return err
		}
	}
	srv := exec.Command(os.Args[0], "-serve", dir)
	_, out, err := proc.Start(srv)
	if err != nil {
		return err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("server child: %w", err)
	}
	addr = strings.TrimSpace(addr)

	ctx := context.Background()
	var clients []compareClient
	for _, c := range []struct {
		name string
		opts []client.Option
	}{
		{"go, gathering (one copy per message)", []client.Option{client.WithGatheringReceive()}},
		{"go, from receive buffers (default)", nil},
	} {
		gc, err := client.Dial(ctx, addr, c.opts...)
		if err != nil {
			return err
		}
		defer gc.Close()
		clients = append(clients, compareClient{c.name, func(ds string) (result, error) {
			return scanOnce(ctx, gc, &scandv1.ScanRequest{Paths: []string{ds + ".parquet"}})
		}})
	}
	if python != "-" {
		if python == "" {
			root, err := repo.Root()
			if err != nil {
				return err
			}
			python = filepath.Join(root, ".venv", "bin", "python")
		}
		py, err := startPy(python, addr)
		if err != nil {
			return fmt.Errorf("pyarrow client: %w (pass -python, or -python - to skip it)", err)
		}
		defer py.close()
		clients = append(clients, compareClient{"pyarrow.flight (stock)", py.scan})
	}

	// One scan of each data set by each client first, unmeasured: the
	// server's caches and the clients' pools warm up.
	for _, ds := range datasets {
		for _, c := range clients {
			if _, err := c.scan(ds); err != nil {
				return fmt.Errorf("%s, %s: %w", c.name, ds, err)
			}
		}
	}
	if prof != "" {
		stop, err := profile(prof)
		if err != nil {
			return err
		}
		defer stop()
	}
	res := map[string][]result{}
	for t := range turns {
		for _, ds := range datasets {
			// Rotate who goes first, so that no client always follows
			// the same one.
			for k := range clients {
				c := clients[(k+t)%len(clients)]
				r, err := c.scan(ds)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", c.name, ds, err)
				}
				res[ds+"\x00"+c.name] = append(res[ds+"\x00"+c.name], r)
			}
		}
	}
	fmt.Printf("Client CPU per GB of Arrow data received (user+system, getrusage of the client process), %d turns, median;\n", turns)
	fmt.Printf("server %s, on this machine (%d CPUs; server and clients share them).\n\n", addr, runtime.NumCPU())
	fmt.Printf("| data | client | GB/scan | CPU s/GB | vs pyarrow | min-max s/GB | faults/GB | wall MB/s |\n")
	fmt.Printf("|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, ds := range datasets {
		var py float64
		if python != "-" {
			py = median(res[ds+"\x00"+clients[len(clients)-1].name], cpuPerGB)
		}
		for _, c := range clients {
			rs := res[ds+"\x00"+c.name]
			m := median(rs, cpuPerGB)
			lo, hi := minMax(rs, cpuPerGB)
			ratio := "-"
			if py > 0 {
				ratio = fmt.Sprintf("%.2fx", m/py)
			}
			gb := float64(rs[0].Bytes) / 1e9
			fmt.Printf("| %s | %s | %.3f | %.3f | %s | %.3f-%.3f | %.0f | %.0f |\n", ds, c.name, gb, m, ratio, lo, hi,
				median(rs, func(r result) float64 { return float64(r.Faults) / (float64(r.Bytes) / 1e9) }),
				median(rs, func(r result) float64 { return float64(r.Bytes) / 1e6 / r.Wall }))
		}
	}
	return nil
}

func cpuPerGB(r result) float64 { return r.CPU / (float64(r.Bytes) / 1e9) }

func median(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	sort.Float64s(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func minMax(rs []result, f func(result) float64) (float64, float64) {
	lo, hi := f(rs[0]), f(rs[0])
	for _, r := range rs[1:] {
		lo, hi = min(lo, f(r)), max(hi, f(r))
	}
	return lo, hi
}

// pyClient is the pyarrow client process (pyclient.py).
type pyClient struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	addr string
}

func startPy(python, addr string) (*pyClient, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(python, filepath.Join(root, "bench", "goread", "pyclient.py"))
	in, out, err := proc.Start(cmd)
	if err != nil {
		return nil, err
	}
	p := &pyClient{cmd: cmd, in: in, out: bufio.NewScanner(out), addr: addr}
	if !p.out.Scan() || p.out.Text() != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("pyclient.py did not start: %v", p.out.Err())
	}
	return p, nil
}

func (p *pyClient) scan(ds string) (result, error) {
	fmt.Fprintf(p.in, "%s %s\n", p.addr, ds+".parquet")
	if !p.out.Scan() {
		return result{}, fmt.Errorf("pyclient.py: %v", p.out.Err())
	}
	var r result
	if err := json.Unmarshal(p.out.Bytes(), &r); err != nil {
		return result{}, fmt.Errorf("pyclient.py: %q: %w", p.out.Text(), err)
	}
	return r, nil
}

func (p *pyClient) close() {
	p.in.Close()
	p.cmd.Wait()
}

// serve runs a scand server of root on a loopback port, prints the port,
// and serves until stdin closes.
func serve(root string) error {
	bucket, err := local.New(root)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Config{Bucket: bucket, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go srv.Serve(lis)
	fmt.Println(lis.Addr().String())
	io.Copy(io.Discard, os.Stdin)
	srv.Stop()
	return nil
}
