// Command scaleout measures how an IO-bound scan speeds up with 1, 2 and
// 3 scand replicas that share it (--peers, placement; docs/scale-out.md).
//
//	go run ./bench/scaleout            (about a minute on 2 cores)
//
// The data sit in versitygw (a local S3). Each replica reads it through a
// toxiproxy proxy of its own with a bandwidth toxic: that proxy is the
// replica's network link, so one replica is bound by one link's rate and
// three by three. toxiproxy's bandwidth toxic limits each connection, so
// each replica runs with --io-concurrency=2 (at most two GETs, two busy
// connections) and each connection gets half the link's rate.
//
// For each replica count the replicas start fresh (cold caches); the
// reader plans the scan on the first replica and reads every endpoint from
// its first location (the owner), all endpoints in parallel, with one
// Flight connection per replica. It prints the wall time of the cold scan
// and of the best repeated scan, their ratio to one replica, and with 3
// replicas the metadata cache hit rate of the repeated scans, from the
// replicas' /metrics (scand_meta_cache_{hits,misses}_total).
package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/scand/scand/bench/internal/repo"
	"github.com/scand/scand/bench/internal/s3bench"
)

type options struct {
	files, groups int
	groupMiB      float64
	linkMiBps     float64 // per replica
	latency       time.Duration
	repeats       int
	scand         string
	maxReplicas   int
}

func main() {
	var o options
	flag.IntVar(&o.files, "files", 12, "Parquet files")
	flag.IntVar(&o.groups, "groups", 4, "row groups per file (one endpoint each)")
	flag.Float64Var(&o.groupMiB, "group-mib", 1, "MiB per row group (uncompressed, incompressible)")
	flag.Float64Var(&o.linkMiBps, "link", 8, "each replica's link to S3, MiB/s")
	flag.DurationVar(&o.latency, "latency", 5*time.Millisecond, "added to every S3 response")
	flag.IntVar(&o.repeats, "repeats", 2, "repeated scans after the cold one")
	flag.IntVar(&o.maxReplicas, "replicas", 3, "largest replica count")
	flag.StringVar(&o.scand, "scand", "", "scand binary (default: .tools/bin/scand, else built from this tree)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		os.Exit(1)
	}
}

// result is one replica count's measurements.
type result struct {
	replicas       int
	cold, best     time.Duration
	owned          []int // endpoints each replica owns
	hits, misses   int64 // metadata cache, repeated scans
	rows, expected int64
}

func run(o options) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	stack, err := s3bench.StartStack(root, "scaleout", o.scand)
	if err != nil {
		return err
	}
	defer stack.Stop()
	dir, bin, gwAddr, tp := stack.Dir, stack.Bin, stack.GatewayAddr, stack.Toxiproxy
	rows, err := upload(o, dir, gwAddr)
	if err != nil {
		return err
	}
	keys := filepath.Join(dir, "ticket-keys")
	if err := os.WriteFile(keys, []byte(base64.StdEncoding.EncodeToString(make([]byte, 32))+"\n"), 0o600); err != nil {
		return err
	}
	var results []*result
	for n := 1; n <= o.maxReplicas; n++ {
		r, err := measure(o, n, bin, dir, keys, gwAddr, tp)
		if err != nil {
			return fmt.Errorf("%d replicas: %w", n, err)
		}
		r.expected = rows
		results = append(results, r)
	}
	printTable(os.Stdout, o, results)
	return nil
}

// upload writes the files and puts them in the bucket; it returns the
// total rows.
func upload(o options, dir, gwAddr string) (int64, error) {
	ctx := context.Background()
	s3c := s3bench.S3Client("http://" + gwAddr)
	if _, err := s3c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(s3bench.Bucket)}); err != nil {
		return 0, err
	}
	const cols = 8
	perGroup := int(o.groupMiB * (1 << 20) / (cols * 8))
	for i := range o.files {
		p := filepath.Join(dir, fmt.Sprintf("part-%02d.parquet", i))
		if err := writeFile(p, cols, perGroup, o.groups, uint64(i)); err != nil {
			return 0, err
		}
		if err := s3bench.Upload(ctx, s3c, "scaleout/"+filepath.Base(p), p); err != nil {
			return 0, err
		}
	}
	return int64(o.files * o.groups * perGroup), nil
}

// writeFile writes groups row groups of rows random int64s in cols
// columns, uncompressed and plain, so that bytes on the wire are bytes of
// the file.
func writeFile(path string, cols, rows, groups int, seed uint64) error {
	fields := make([]arrow.Field, cols)
	for i := range fields {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: arrow.PrimitiveTypes.Int64}
	}
	schema := arrow.NewSchema(fields, nil)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Uncompressed),
		parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(int64(rows)))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	for range groups {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for c := range cols {
			ib := b.Field(c).(*array.Int64Builder)
			for range rows {
				ib.Append(int64(rng.Uint64()))
			}
		}
		rec := b.NewRecordBatch()
		err := w.Write(rec)
		rec.Release()
		b.Release()
		if err != nil {
			return err
		}
	}
	return w.Close()
}

// replica is one scand process of a run.
type replica struct {
	p         *s3bench.Process
	addr      string // host:port
	location  string // grpc://addr
	metrics   string // http://host:port/metrics
	logMatchN *regexp.Regexp
}

// measure starts n replicas, each behind its own link, and scans.
func measure(o options, n int, bin, dir, keys, gwAddr string, tp *s3bench.Toxiproxy) (*result, error) {
	reps, err := startReplicas(o, n, bin, dir, keys, gwAddr, tp)
	defer func() {
		for _, r := range reps {
			r.p.Stop()
		}
	}()
	if err != nil {
		return nil, err
	}
	conns, err := dialAll(reps)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	res := &result{replicas: n}
	sc, err := scanAll(conns, reps[0].location, reps)
	if err != nil {
		return nil, err
	}
	res.cold, res.rows, res.owned = sc.elapsed, sc.rows, sc.owned
	h0, m0 := cacheLookups(reps)
	for range o.repeats {
		sc, err := scanAll(conns, reps[0].location, reps)
		if err != nil {
			return nil, err
		}
		if res.best == 0 || sc.elapsed < res.best {
			res.best = sc.elapsed
		}
	}
	h1, m1 := cacheLookups(reps)
	res.hits, res.misses = h1-h0, m1-m0
	logf("%d replicas: cold %v, best repeated %v, owners %v", n, res.cold.Round(time.Millisecond), res.best.Round(time.Millisecond), res.owned)
	return res, nil
}

func startReplicas(o options, n int, bin, dir, keys, gwAddr string, tp *s3bench.Toxiproxy) ([]*replica, error) {
	var reps []*replica
	var peers []string
	for range n {
		addr, err := s3bench.FreeAddr()
		if err != nil {
			return nil, err
		}
		peers = append(peers, addr)
	}
	rootDir := filepath.Join(dir, "root")
	if err := os.MkdirAll(rootDir, 0o755); err != nil {
		return nil, err
	}
	for i, addr := range peers {
		// Each connection gets half the link: --io-concurrency=2 below.
		link, err := tp.BandwidthProxy(fmt.Sprintf("n%d-r%d", n, i), gwAddr, int64(o.linkMiBps*(1<<20))/2, o.latency)
		if err != nil {
			return reps, err
		}
		maddr, err := s3bench.FreeAddr()
		if err != nil {
			return reps, err
		}
		args := []string{"serve", "--listen", addr, "--root", rootDir, "--metrics-listen", maddr,
			"--peers", strings.Join(peers, ","), "--advertise", "grpc://" + addr, "--ticket-key-file", keys,
			"--io-concurrency", "2",
			"--s3-endpoint", "http://" + link, "--s3-path-style", "--s3-region", s3bench.Region,
			"--s3-access-key", s3bench.AccessKey, "--s3-secret-key", s3bench.SecretKey}
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "AWS_EC2_METADATA_DISABLED=true"}
		p, err := s3bench.StartProcess(fmt.Sprintf("scand-n%d-r%d", n, i), dir, bin, args, env, func() bool {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err == nil
		})
		if err != nil {
			return reps, err
		}
		reps = append(reps, &replica{p: p, addr: addr, location: "grpc://" + addr, metrics: "http://" + maddr + "/metrics",
			logMatchN: regexp.MustCompile(fmt.Sprintf(`cluster members.*count=%d\b`, n))})
	}
	return reps, waitMembership(reps)
}

// waitMembership waits (at most 20 s) for every replica to log a ring of
// all of them. It reads the logs rather than planning a scan, which would
// warm the planner's metadata cache before the cold scan.
func waitMembership(reps []*replica) error {
	deadline := time.Now().Add(20 * time.Second)
	for _, r := range reps {
		for {
			b, _ := os.ReadFile(r.p.Log)
			if r.logMatchN.Match(b) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s never saw all %d replicas: %s", r.addr, len(reps), s3bench.Tail(b))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

func dialAll(reps []*replica) (map[string]flight.Client, error) {
	conns := map[string]flight.Client{}
	for _, r := range reps {
		c, err := flight.NewClientWithMiddleware(r.addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return conns, err
		}
		conns[r.location] = c
	}
	return conns, nil
}

type scanned struct {
	elapsed time.Duration
	rows    int64
	owned   []int
}

// scanAll plans on planner and reads every endpoint from its first
// location, all at once.
func scanAll(conns map[string]flight.Client, planner string, reps []*replica) (scanned, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := []byte(`{"paths": ["s3://` + s3bench.Bucket + `/scaleout/*.parquet"], "split_bytes": 1}`)
	info, err := conns[planner].GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		return scanned{}, fmt.Errorf("GetFlightInfo: %w", err)
	}
	owned := make([]int, len(reps))
	rows := make([]int64, len(info.Endpoint))
	g, gctx := errgroup.WithContext(ctx)
	for i, ep := range info.Endpoint {
		loc := planner
		if len(ep.Location) > 0 {
			loc = ep.Location[0].Uri
		}
		for j, r := range reps {
			if r.location == loc {
				owned[j]++
			}
		}
		c, ok := conns[loc]
		if !ok {
			return scanned{}, fmt.Errorf("endpoint %d names %s, not a replica of this run", i, loc)
		}
		g.Go(func() (err error) {
			rows[i], err = readEndpoint(gctx, c, ep.Ticket)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return scanned{}, err
	}
	var total int64
	for _, n := range rows {
		total += n
	}
	return scanned{elapsed: time.Since(start), rows: total, owned: owned}, nil
}

func readEndpoint(ctx context.Context, c flight.Client, t *flight.Ticket) (int64, error) {
	stream, err := c.DoGet(ctx, t)
	if err != nil {
		return 0, err
	}
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	var n int64
	for rdr.Next() {
		n += rdr.RecordBatch().NumRows()
	}
	if err := rdr.Err(); err != nil && err != io.EOF {
		return n, err
	}
	return n, nil
}

// cacheLookups sums the replicas' metadata cache hits and misses.
func cacheLookups(reps []*replica) (hits, misses int64) {
	for _, r := range reps {
		hits += metric(r.metrics, "scand_meta_cache_hits_total")
		misses += metric(r.metrics, "scand_meta_cache_misses_total")
	}
	return hits, misses
}

func metric(url, name string) int64 {
	body, err := s3bench.HTTPGet(url)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return int64(v)
		}
	}
	return 0
}

// The scale-out targets.
var targets = map[int]float64{2: 0.6, 3: 0.45}

const targetHitRate = 0.9

func printTable(w io.Writer, o options, results []*result) {
	total := float64(o.files*o.groups) * o.groupMiB
	fmt.Fprintf(w, "scale-out: %d files x %d row groups = %d endpoints, %.0f MiB from versitygw; each replica's link %.1f MiB/s "+
		"(toxiproxy bandwidth, 2 connections x %.1f MiB/s) +%v\n", o.files, o.groups, o.files*o.groups, total, o.linkMiBps, o.linkMiBps/2, o.latency)
	fmt.Fprintf(w, "%-9s %-8s %-14s %-13s %-8s %-8s %s\n", "replicas", "cold", "repeated(best)", "vs 1 replica", "target", "verdict", "endpoints owned")
	base := results[0].best
	for _, r := range results {
		ratio := float64(r.best) / float64(base)
		target, verdict := "", ""
		if t, ok := targets[r.replicas]; ok {
			target = fmt.Sprintf("<=%.2fx", t)
			verdict = map[bool]string{true: "ok", false: "MISSED"}[ratio <= t]
		}
		if r.rows != r.expected {
			verdict = fmt.Sprintf("WRONG ROWS %d of %d", r.rows, r.expected)
		}
		fmt.Fprintf(w, "%-9d %-8s %-14s %-13s %-8s %-8s %v\n", r.replicas, secs(r.cold), secs(r.best), fmt.Sprintf("%.2fx", ratio), target, verdict, r.owned)
	}
	last := results[len(results)-1]
	rate := float64(last.hits) / float64(max(last.hits+last.misses, 1))
	fmt.Fprintf(w, "metadata cache hit rate, %d repeated scans with %d replicas: %.1f%% (%d hits, %d misses), target >= %.0f%%: %s\n",
		o.repeats, last.replicas, 100*rate, last.hits, last.misses, 100*targetHitRate, map[bool]string{true: "ok", false: "MISSED"}[rate >= targetHitRate])
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
