// Command sendpath compares scand's two DoGet send paths, stock (arrow-go's
// Flight writer) and zero-copy (server/sendpath.go), in one run, and prints
// a table.
//
//	go run ./bench/sendpath [-rows 1000000] [-reps 5] [-dir DIR] [-profile DIR] [-python PATH]
//	                        [-floor-mb 512] [-floor-only] [-floor-variants 256,32+unshared]
//
// It writes two Parquet files (uncompressed, plain encoded, so that the
// decoder's share of the server's CPU is small): "wide", rows of 8 int64
// and 8 float64 columns, and "strings", rows of 3 string columns of 20-200
// bytes of words. For each send path and IPC compression it starts the server as a
// child process (this same program), all of them at once, scans each file
// -reps times per configuration with Go Flight clients over loopback, the
// configurations taking turns scan by scan (so that drift in the machine's
// speed affects all alike), and reports, per configuration:
//
//   - server CPU seconds (user+system, getrusage in the child) per GB of
//     Arrow IPC data sent (the uncompressed message bytes, so compressed
//     runs are comparable); and the send path's part of it: the same minus
//     the CPU of decoding the file alone (the child runs DoGet's reader
//     without sending, "decode alone" in the output);
//   - bytes the server allocated (runtime.MemStats.TotalAlloc) per byte
//     sent, and the same minus the decode's;
//   - client throughput, Arrow IPC MB per second of wall time, with the
//     stock gRPC codec and settings, or client.ReceiveOptions (the
//     zero-copy codec and bulk flow-control windows), and, uncompressed,
//     with a stock pyarrow.flight client (pyclient.py, run with -python,
//     by default <repo>/.venv/bin/python; -python - skips those rows);
//   - the bytes on the wire.
//
// A second table compares the two ways the server reads local files
// (--local-read): pread, and mmap (the file mapped read-only, reads copied
// from the mapping), for both send paths without compression: decode
// alone and whole-server CPU per GB, with ratios to pread (same send path)
// and to stock (same read mode).
//
// A third table (floor.go) measures the send path against the transport
// floor: "int64", 16 uncompressed int64 columns of -floor-mb MB of Arrow
// data, scanned by the stock and zero-copy servers into stock clients
// (arrow-go's Flight client with gRPC's defaults, and pyarrow.flight), and
// a bare loopback TCP sender of the same bytes, turns interleaved: server
// CPU per GB, "x floor" (over the bare sender's) and "vs stock", whole and
// less the decode alone. -floor-variants adds zero-copy rows with other
// gRPC write buffer sizes (KiB; +unshared: a buffer held per connection).
// -floor-only prints that table alone; -floor-mb 0 skips it.
//
// With -profile DIR, it also writes a CPU profile of the server for each
// send path scanning -profile-data (DIR/server-<data>-<path>.pprof); with
// -profile-data int64, of the bare sender too (with -floor-only, the
// profiles alone).
//
// The client and the server share the machine: on few cores the client's
// work limits the throughput of both paths.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/stats"

	"github.com/scand/scand/bench/internal/proc"
	"github.com/scand/scand/bench/internal/repo"
	"github.com/scand/scand/bench/internal/synth"
	"github.com/scand/scand/client"
	"github.com/scand/scand/iosched"
	"github.com/scand/scand/scanner"
	scparquet "github.com/scand/scand/scanner/parquet"
	"github.com/scand/scand/server"
	"github.com/scand/scand/server/admission"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/wire"
)

func main() {
	isChild := flag.Bool("child", false, "run as the server child (internal)")
	root := flag.String("root", "", "child: directory served")
	sendPath := flag.String("send-path", "", "child: send path")
	comp := flag.String("compression", "", "child: IPC compression")
	localRead := flag.String("local-read", "pread", "child: how local files are read (pread or mmap)")
	rows := flag.Int("rows", 1_000_000, "rows per generated file")
	reps := flag.Int("reps", 5, "scans of each file per configuration")
	dir := flag.String("dir", "", "where to write the Parquet files (default: a temporary directory)")
	profile := flag.String("profile", "", "directory for server CPU profiles (none when empty)")
	profData := flag.String("profile-data", "wide", "the file scanned while profiling: wide, strings or int64 (the floor table's, with the bare sender)")
	python := flag.String("python", "", "python with pyarrow for the pyarrow client rows (default <repo>/.venv/bin/python; - skips them)")
	floorMB := flag.Int("floor-mb", 512, "MB of Arrow data in the int64 data set of the transport-floor table (0 skips the table)")
	floorOnly := flag.Bool("floor-only", false, "print only the transport-floor table")
	writeBuffer := flag.Int("write-buffer", -1, "child: grpc.WriteBufferSize in bytes (-1: the server's default)")
	unshared := flag.Bool("unshared-write-buffer", false, "child: grpc.SharedWriteBuffer(false), a write buffer held per connection")
	floorVariants := flag.String("floor-variants", "", "extra zerocopy rows of the floor table: comma-separated gRPC write buffer sizes in KiB, each optionally +unshared")
	flag.Parse()
	if *isChild {
		if *sendPath == "bare" {
			runBareChild()
			return
		}
		var opts []grpc.ServerOption
		if *writeBuffer >= 0 {
			opts = append(opts, grpc.WriteBufferSize(*writeBuffer))
		}
		if *unshared {
			opts = append(opts, grpc.SharedWriteBuffer(false)) //nolint:staticcheck // deprecated, the variant measured
		}
		runChild(*root, *sendPath, *comp, *localRead, opts)
		return
	}
	log.SetFlags(0)
	if *dir == "" {
		d, err := os.MkdirTemp("", "sendpath")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	datasets := []string{"wide", "strings"}
	if *floorOnly {
		datasets = nil
	}
	for _, ds := range datasets {
		p := filepath.Join(*dir, ds+".parquet")
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := synth.Write(p, ds, *rows); err != nil {
			log.Fatal(err)
		}
	}

	type config struct {
		path, comp string
		client     string // stock, zerocopy (Go), or pyarrow
		read       string // --local-read
	}
	configs := []config{
		{"stock", "", "stock", "pread"},
		{"zerocopy", "", "stock", "pread"},
		{"zerocopy", "", "zerocopy", "pread"},
		{"stock", "lz4", "stock", "pread"},
		{"zerocopy", "lz4", "zerocopy", "pread"},
		{"stock", "zstd", "stock", "pread"},
		{"zerocopy", "zstd", "zerocopy", "pread"},
		{"stock", "", "stock", "mmap"},
		{"zerocopy", "", "zerocopy", "mmap"},
	}
	var py *pyClient
	if *python != "-" {
		root, err := repo.Root()
		if err != nil {
			log.Fatal(err)
		}
		if *python == "" {
			*python = filepath.Join(root, ".venv", "bin", "python")
		}
		if py, err = startPyClient(*python, filepath.Join(root, "bench", "sendpath", "pyclient.py")); err != nil {
			log.Fatalf("pyarrow client: %v (create the venv with scripts/test.sh, pass -python, or -python - to skip it)", err)
		}
		defer py.close()
		// After the Go rows: the pyarrow rows take their IPC bytes from
		// the uncompressed Go rows.
		configs = append(configs, config{"stock", "", "pyarrow", "pread"}, config{"zerocopy", "", "pyarrow", "pread"})
	}
	if *floorMB > 0 {
		// Rows of 16 int64 columns: 128 bytes each.
		if err := ensureDataset(*dir, "int64", *floorMB*1e6/128); err != nil {
			log.Fatal(err)
		}
	}
	if *floorOnly {
		if *floorMB > 0 && (*profile == "" || *profData != "int64") {
			runFloor(*dir, *reps, py, *floorVariants)
		}
		profileServers(*profile, *profData, *dir, *reps)
		return
	}
	readModes := []string{"pread", "mmap"}
	type result struct {
		config
		ds                       string
		arrowBytes, wireBytes    int64
		cpu                      time.Duration
		alloc                    uint64
		wall                     time.Duration
		cpuPerGB, allocPerB, mbs float64
		sendPerGB, sendAllocPerB float64
	}
	var results []result
	// The decode alone, to tell the send path's share of the server's CPU.
	// Keyed by data set, then data set + "/" + read mode.
	decodeCPU := map[string]time.Duration{}
	decodeAlloc := map[string]uint64{}
	for _, mode := range readModes {
		srv, err := startChild(*dir, "stock", "", mode)
		if err != nil {
			log.Fatal(err)
		}
		for _, ds := range datasets {
			srv.command("decode " + ds + ".parquet")
			cpu0, alloc0 := srv.stats()
			for range *reps {
				srv.command("decode " + ds + ".parquet")
			}
			cpu1, alloc1 := srv.stats()
			key := ds + "/" + mode
			decodeCPU[key], decodeAlloc[key] = (cpu1-cpu0)/time.Duration(*reps), (alloc1-alloc0)/uint64(*reps)
			if mode == "pread" {
				decodeCPU[ds], decodeAlloc[ds] = decodeCPU[key], decodeAlloc[key]
			}
		}
		srv.close()
	}
	// Every configuration's server runs at once and their scans alternate,
	// one scan of each per round in a rotating order: on a shared VM whose
	// speed drifts during the run, consecutive blocks of scans per
	// configuration moved the ratios by 20 % and more between runs; taking
	// turns slows every configuration alike.
	srvs := make([]*child, len(configs))
	for i, c := range configs {
		srv, err := startChild(*dir, c.path, c.comp, c.read)
		if err != nil {
			log.Fatal(err)
		}
		srvs[i] = srv
	}
	logical := map[string]int64{} // Arrow IPC bytes of one scan, from the uncompressed runs
	for _, ds := range datasets {
		type tally struct {
			cl         scanClient
			cpu, wall  time.Duration
			alloc      uint64
			arrowBytes int64
		}
		tallies := make([]tally, len(configs))
		for i, c := range configs {
			var cl scanClient
			if c.client == "pyarrow" {
				cl = py.on(srvs[i].addr)
			} else {
				bc, err := newBenchClient(srvs[i].addr, c.client == "zerocopy")
				if err != nil {
					log.Fatal(err)
				}
				cl = bc
			}
			if _, err := cl.scan(ds); err != nil { // warm up: metadata cache, page cache, pools
				log.Fatal(err)
			}
			cl.resetWire()
			tallies[i].cl = cl
		}
		for rep := range *reps {
			for k := range configs {
				i := (k + rep) % len(configs)
				t := &tallies[i]
				cpu0, alloc0 := srvs[i].stats()
				start := time.Now()
				n, err := t.cl.scan(ds)
				if err != nil {
					log.Fatal(err)
				}
				t.wall += time.Since(start)
				cpu1, alloc1 := srvs[i].stats()
				t.cpu += cpu1 - cpu0
				t.alloc += alloc1 - alloc0
				t.arrowBytes += n
			}
		}
		for i, c := range configs { // in order: the uncompressed stock row comes first
			t := tallies[i]
			t.cl.close()
			arrowBytes := t.arrowBytes
			if c.comp == "" && c.client != "pyarrow" {
				logical[ds] = arrowBytes / int64(*reps)
			} else {
				arrowBytes = logical[ds] * int64(*reps)
			}
			r := result{config: c, ds: ds, arrowBytes: arrowBytes, wireBytes: t.cl.wireBytes(),
				cpu: t.cpu, alloc: t.alloc, wall: t.wall}
			r.cpuPerGB = r.cpu.Seconds() / (float64(arrowBytes) / 1e9)
			r.allocPerB = float64(r.alloc) / float64(arrowBytes)
			r.mbs = float64(arrowBytes) / 1e6 / r.wall.Seconds()
			dk := ds + "/" + c.read
			r.sendPerGB = (r.cpu - decodeCPU[dk]*time.Duration(*reps)).Seconds() / (float64(arrowBytes) / 1e9)
			r.sendAllocPerB = (float64(r.alloc) - float64(decodeAlloc[dk]*uint64(*reps))) / float64(arrowBytes)
			results = append(results, r)
		}
	}
	for _, srv := range srvs {
		srv.close()
	}

	fmt.Printf("GOMAXPROCS=%d, NumCPU=%d, %d rows per file, %d scans per row\n\n", runtime.GOMAXPROCS(0), runtime.NumCPU(), *rows, *reps)
	for _, ds := range datasets {
		fmt.Printf("decode alone, %s: %.3f s CPU and %.0f MB allocated per scan\n", ds, decodeCPU[ds].Seconds(), float64(decodeAlloc[ds])/1e6)
	}
	all := results
	results = nil
	for _, r := range all {
		if r.read == "pread" {
			results = append(results, r)
		}
	}
	fmt.Println()
	fmt.Printf("%-8s %-9s %-5s %-8s %8s %8s | %8s %6s %8s %6s | %8s %8s | %6s %6s\n",
		"data", "send", "comp", "client", "IPC MB", "wire MB", "srv s/GB", "vs st", "send s/GB", "vs st", "alloc B/B", "send B/B", "MB/s", "vs st")
	// Each row against the stock server's row of the same data and
	// compression, read by a client of the same kind (Go or pyarrow).
	baseKey := func(r result) string { return fmt.Sprint(r.ds, "/", r.comp, "/", r.client == "pyarrow") }
	base := map[string]result{}
	for _, r := range results {
		if r.path == "stock" {
			base[baseKey(r)] = r
		}
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].ds > results[j].ds })
	for _, r := range results {
		b := base[baseKey(r)]
		wire := "-"
		if r.client != "pyarrow" {
			wire = fmt.Sprintf("%.0f", float64(r.wireBytes)/1e6)
		}
		fmt.Printf("%-8s %-9s %-5s %-8s %8.0f %8s | %8.3f %5.2fx %9.3f %5.2fx | %9.3f %8.3f | %6.0f %5.2fx\n",
			r.ds, r.path, orDash(r.comp), r.client, float64(r.arrowBytes)/1e6, wire,
			r.cpuPerGB, r.cpuPerGB/b.cpuPerGB, r.sendPerGB, r.sendPerGB/b.sendPerGB,
			r.allocPerB, r.sendAllocPerB, r.mbs, r.mbs/b.mbs)
	}

	// Local read modes: uncompressed, each send path with its own client.
	fmt.Printf("\nlocal read modes (uncompressed; zerocopy rows use the zerocopy client)\n\n")
	fmt.Printf("%-8s %-6s %-9s | %10s %8s | %8s %8s %8s | %9s | %6s %8s\n",
		"data", "read", "send", "decode s/GB", "vs pread", "srv s/GB", "vs pread", "vs stock", "alloc B/B", "MB/s", "vs pread")
	find := func(ds, path, read string) (result, bool) {
		for _, r := range all {
			if r.ds == ds && r.path == path && r.read == read && r.comp == "" && r.client == map[bool]string{true: "zerocopy", false: "stock"}[path == "zerocopy"] {
				return r, true
			}
		}
		return result{}, false
	}
	for _, ds := range datasets {
		for _, path := range []string{"stock", "zerocopy"} {
			for _, mode := range readModes {
				r, ok := find(ds, path, mode)
				p, okp := find(ds, path, "pread")
				st, oks := find(ds, "stock", mode)
				if !ok || !okp || !oks {
					continue
				}
				gb := float64(r.arrowBytes) / float64(*reps) / 1e9
				dec := decodeCPU[ds+"/"+mode].Seconds() / gb
				decP := decodeCPU[ds+"/pread"].Seconds() / gb
				fmt.Printf("%-8s %-6s %-9s | %10.3f %7.2fx | %8.3f %7.2fx %7.2fx | %9.3f | %6.0f %7.2fx\n",
					ds, mode, path, dec, dec/decP, r.cpuPerGB, r.cpuPerGB/p.cpuPerGB, r.cpuPerGB/st.cpuPerGB,
					r.allocPerB, r.mbs, r.mbs/p.mbs)
			}
		}
	}

	if *floorMB > 0 {
		runFloor(*dir, *reps, py, *floorVariants)
	}
	profileServers(*profile, *profData, *dir, *reps)
}

// profileServers writes a CPU profile of the server of each send path
// scanning data set ds -reps times, into dir (nothing when dir is empty),
// each path read by its own Go client; for the int64 data set, the floor
// table's: stock Go clients, and the bare-socket sender too.
func profileServers(dir, ds, root string, reps int) {
	if dir == "" {
		return
	}
	paths := []string{"stock", "zerocopy"}
	if ds == "int64" {
		paths = append(paths, "bare")
	}
	for _, p := range paths {
		srv, err := startChild(root, p, "", "pread")
		if err != nil {
			log.Fatal(err)
		}
		var cl scanClient
		if p == "bare" {
			cl, err = newBareClient(srv.addr, fileSize(root, ds))
		} else {
			cl, err = newBenchClient(srv.addr, p == "zerocopy" && ds != "int64")
		}
		if err != nil {
			log.Fatal(err)
		}
		cl.scan(ds)
		out := filepath.Join(dir, "server-"+ds+"-"+p+".pprof")
		srv.command("prof " + out)
		for range reps {
			cl.scan(ds)
		}
		srv.command("stop")
		cl.close()
		srv.close()
		fmt.Printf("\nserver CPU profile, %s, scanning %s: %s\n", p, ds, out)
	}
}

func ensureDataset(dir, ds string, rows int) error {
	p := filepath.Join(dir, ds+".parquet")
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	return synth.Write(p, ds, rows)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// child is the server process.
type child struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	addr string
}

func startChild(root, path, comp, read string, extra ...string) (*child, error) {
	args := append([]string{"-child", "-root", root, "-send-path", path, "-compression", comp, "-local-read", read}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	in, out, err := proc.Start(cmd)
	if err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewReader(out)}
	c.addr, err = c.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("server child: %w", err)
	}
	c.addr = strings.TrimSpace(c.addr)
	return c, nil
}

func (c *child) command(line string) string {
	fmt.Fprintln(c.in, line)
	s, err := c.out.ReadString('\n')
	if err != nil {
		log.Fatalf("server child: %v", err)
	}
	return strings.TrimSpace(s)
}

// stats returns the child's CPU time and bytes allocated so far.
func (c *child) stats() (time.Duration, uint64) {
	var cpu int64
	var alloc uint64
	fmt.Sscan(c.command("stats"), &cpu, &alloc)
	return time.Duration(cpu), alloc
}

func (c *child) close() {
	c.in.Close()
	c.cmd.Wait()
}

// newScand wires a server of root as scand serve does with these flags'
// values and the memory defaults (--io-memory split half for prefetch and
// half for admission).
func newScand(root, path, comp, read string, grpcOpts []grpc.ServerOption) (*server.Server, error) {
	sendPath, err := wire.ParseSendPath(path)
	if err != nil {
		return nil, err
	}
	compression, err := wire.ParseCompression(comp)
	if err != nil {
		return nil, err
	}
	mode, err := local.ParseReadMode(read)
	if err != nil {
		return nil, err
	}
	var lopts []local.Option
	if mode == local.ReadMmap {
		lopts = append(lopts, local.WithMmap())
	}
	lb, err := local.New(root, lopts...)
	if err != nil {
		return nil, err
	}
	bucket := &storage.Mux{Default: lb}
	return server.New(server.Config{
		Bucket:        bucket,
		Scheduler:     iosched.New(bucket, iosched.Options{Memory: iosched.DefaultMemory / 2}),
		Admission:     admission.New(iosched.DefaultMemory/2, 0),
		SendPath:      sendPath,
		Compression:   compression,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		ServerOptions: grpcOpts,
	})
}

// runChild serves root until stdin closes, answering "stats" (CPU ns and
// bytes allocated), "prof FILE" (start a CPU profile) and "stop".
// opts are added to the server's gRPC options (the floor table's
// variants).
func runChild(root, path, comp, read string, opts []grpc.ServerOption) {
	srv, err := newScand(root, path, comp, read, opts)
	if err != nil {
		log.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(lis)
	fmt.Println(lis.Addr().String())
	childCommands(func(cmd, arg string) bool {
		if cmd != "decode" {
			return false
		}
		// The server's scan without the send: the same reader, batch
		// size and allocator, batches released as decoded.
		if err := decodeOnly(root, arg, read); err != nil {
			log.Fatal(err)
		}
		fmt.Println("ok")
		return true
	})
	srv.Stop()
}

// childCommands answers the parent's commands on stdin until it closes:
// "stats" (CPU ns and bytes allocated), "prof FILE" (start a CPU
// profile), "stop" (end it), and whatever other answers.
func childCommands(other func(cmd, arg string) bool) {
	var prof *os.File
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "stats":
			var ru syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			fmt.Println(int64(cpu), ms.TotalAlloc)
		case "prof":
			var err error
			prof, err = os.Create(arg)
			if err == nil {
				err = pprof.StartCPUProfile(prof)
			}
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println("ok")
		case "stop":
			pprof.StopCPUProfile()
			prof.Close()
			fmt.Println("ok")
		default:
			if !other(cmd, arg) {
				log.Fatalf("server child: unknown command %q", cmd)
			}
		}
	}
}

// decodeOnly reads every row group of root/name as DoGet does, and drops
// the batches. read is the local read mode (pread or mmap).
func decodeOnly(root, name, read string) error {
	ctx := context.Background()
	var lopts []local.Option
	if read == "mmap" {
		lopts = append(lopts, local.WithMmap())
	}
	bucket, err := local.New(root, lopts...)
	if err != nil {
		return err
	}
	sched := iosched.New(bucket, iosched.Options{})
	info, err := bucket.Stat(ctx, name)
	if err != nil {
		return err
	}
	f, err := sched.Open(ctx, info)
	if err != nil {
		return err
	}
	defer f.Close()
	pf, err := scparquet.Open(ctx, name, f, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	defer pf.Close()
	proj, err := pf.Project(nil)
	if err != nil {
		return err
	}
	opts := scanner.ReadOptions{Mem: memory.DefaultAllocator}
	var rows, bytes int64
	for g := range proj.Groups {
		opts.Groups = append(opts.Groups, g)
		rows += proj.Groups[g].Rows
		bytes += proj.Groups[g].MemBytes
	}
	// server.batchRowsFor: batches of about 2 MiB.
	opts.BatchRows = min(64<<10, max(1, (2<<20)/max(1, bytes/max(rows, 1))))
	return pf.Read(ctx, proj, opts, func(rec arrow.RecordBatch) error {
		rec.Release()
		return nil
	})
}

// scanClient scans a data set through one server and reports the Arrow
// IPC bytes received (0 when it cannot tell).
type scanClient interface {
	scan(ds string) (int64, error)
	wireBytes() int64
	resetWire()
	close()
}

// pyClient is the pyarrow client process (pyclient.py), shared by the
// servers; on binds it to one.
type pyClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startPyClient(python, script string) (*pyClient, error) {
	if _, err := os.Stat(python); err != nil {
		return nil, err
	}
	cmd := exec.Command(python, script)
	in, out, err := proc.Start(cmd)
	if err != nil {
		return nil, err
	}
	p := &pyClient{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	if !p.out.Scan() || p.out.Text() != "ready" {
		cmd.Process.Kill()
		return nil, fmt.Errorf("%s did not start: %v", script, p.out.Err())
	}
	return p, nil
}

func (p *pyClient) close() {
	p.in.Close()
	p.cmd.Wait()
}

func (p *pyClient) on(addr string) scanClient { return pyScan{p, addr} }

type pyScan struct {
	p    *pyClient
	addr string
}

func (s pyScan) scan(ds string) (int64, error) {
	fmt.Fprintf(s.p.in, "%s %s\n", s.addr, ds)
	if !s.p.out.Scan() {
		return 0, fmt.Errorf("pyarrow client: %v", s.p.out.Err())
	}
	return 0, nil // the IPC bytes come from the Go rows
}

func (pyScan) wireBytes() int64 { return 0 }
func (pyScan) resetWire()       {}
func (pyScan) close()           {}

// benchClient scans through a Flight client, counting bytes on the wire.
type benchClient struct {
	conn *grpc.ClientConn
	fc   flight.Client
	wire atomic.Int64
}

type wireCounter struct{ c *benchClient }

func (w wireCounter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (w wireCounter) HandleRPC(_ context.Context, s stats.RPCStats) {
	if in, ok := s.(*stats.InPayload); ok {
		w.c.wire.Add(int64(in.WireLength))
	}
}
func (w wireCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (w wireCounter) HandleConn(context.Context, stats.ConnStats)                       {}

func newBenchClient(addr string, zeroCopy bool) (*benchClient, error) {
	c := &benchClient{}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithStatsHandler(wireCounter{c})}
	if zeroCopy {
		opts = append(opts, client.ReceiveOptions()...)
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, err
	}
	c.conn, c.fc = conn, flight.NewClientFromConn(conn, nil)
	return c, nil
}

func (c *benchClient) close()           { c.conn.Close() }
func (c *benchClient) wireBytes() int64 { return c.wire.Load() }
func (c *benchClient) resetWire()       { c.wire.Store(0) }

// scan reads every endpoint of ds in order, decoding the batches, and
// returns the Arrow IPC bytes received (data_header + data_body of every
// message; compressed bodies count as sent).
func (c *benchClient) scan(ds string) (int64, error) {
	ctx := context.Background()
	cmd := fmt.Sprintf(`{"paths":[%q]}`, ds+".parquet")
	info, err := c.fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(cmd)})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, ep := range info.Endpoint {
		stream, err := c.fc.DoGet(ctx, ep.Ticket)
		if err != nil {
			return n, err
		}
		cr := &countingReader{r: stream}
		rdr, err := flight.NewRecordReader(cr)
		if err != nil {
			return n, err
		}
		for rdr.Next() {
		}
		err = rdr.Err()
		rdr.Release()
		n += cr.n
		if err != nil && err != io.EOF {
			return n, err
		}
	}
	return n, nil
}

// countingReader counts the Arrow IPC bytes of the messages it passes on.
type countingReader struct {
	r flight.DataStreamReader
	n int64
}

func (c *countingReader) Recv() (*flight.FlightData, error) {
	fd, err := c.r.Recv()
	if fd != nil {
		c.n += int64(len(fd.DataHeader) + len(fd.DataBody))
	}
	return fd, err
}
