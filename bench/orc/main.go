// Command orc measures the single-core decode throughput of scand's ORC
// reader (scanner/orc) against pyarrow.orc on the same files, in one run,
// and prints a table.
//
//	go run ./bench/orc [-repeats 5] [-scale 1.0] [-dir DIR] [-files REGEXP] [-regen]
//	                   [-python PATH] [-no-pyarrow] [-wall] [-cpuprofile FILE] [-memprofile FILE]
//
// Files: bench/orc/gen.py writes four datasets (ints, doubles, strings,
// nested; 60-100 MB of Arrow data each at -scale 1) with zlib, zstd and
// snappy, using <repo>/.venv/bin/python (scripts/test.sh creates that venv
// with pyarrow==26.0.1), into -dir (default <repo>/.tools/bench-orc; reused
// while gen.py and -scale are unchanged). The two real-world files of the
// ORC examples (demo-11-zlib.orc: RLE v1, 385 stripes; demo-12-zlib.orc:
// RLE v2, one stripe) are added when $SCAND_TESTDATA (default
// <repo>/../shared/testdata) has them.
//
// Measurement, per file: every pass decodes the whole file, all columns,
// from local disk (the OS page cache after the warm-up), into Arrow arrays
// that are then released. One warm-up pass of each reader, then -repeats
// timed passes, alternating scand and pyarrow so that both see the same
// machine.
//
//   - scand: runtime.GOMAXPROCS(1); orc.Open on the *os.File (plain preads:
//     no IO scheduler, no metadata cache), Project(all columns), Read with
//     the default batch size and Go's allocator. Garbage collection runs
//     inside the timed passes, as it would in the server.
//   - pyarrow: a Python child (started once) with pa.set_cpu_count(1) and
//     pa.set_io_thread_count(1) runs pyarrow.orc.read_table(path).
//
// Throughput is MB (10^6 bytes) of Arrow data per second of CPU time
// (user+system of the decoding process: getrusage for scand,
// time.process_time for pyarrow), which is what a single-core decode costs
// and, unlike wall time, barely moves when other processes share the
// machine; -wall uses wall time instead. The Arrow data size is pyarrow's
// Table.nbytes for the file, the same figure for both readers, so the ratio
// is the ratio of times. The table shows min/median/max MB/s of each
// reader and the ratio of the medians (scand/pyarrow; above 1 means scand
// is faster). -cpuprofile profiles scand's passes (warm-up included).
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/bench/internal/repo"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/orc"
)

//go:embed gen.py
var genScript []byte

// pyBench is a child that times pyarrow.orc.read_table on one core. Each
// line on stdin is "warm PATH" or "time PATH"; it answers one JSON line:
// nbytes, rows, wall and cpu seconds of one read.
const pyBench = `
import json, sys, time
import pyarrow as pa, pyarrow.orc as po
pa.set_cpu_count(1)
pa.set_io_thread_count(1)
print(json.dumps({"version": pa.__version__}), flush=True)
for line in sys.stdin:
    cmd, path = line.rstrip("\n").split(" ", 1)
    w0, c0 = time.perf_counter(), time.process_time()
    t = po.read_table(path)
    w1, c1 = time.perf_counter(), time.process_time()
    out = {"nbytes": t.nbytes, "rows": t.num_rows, "wall": w1 - w0, "cpu": c1 - c0}
    del t
    print(json.dumps(out), flush=True)
`

type benchFile struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	Rows      int64  `json:"rows"`
	FileBytes int64  `json:"file_bytes"`
}

type pyPass struct {
	NBytes int64   `json:"nbytes"`
	Rows   int64   `json:"rows"`
	Wall   float64 `json:"wall"`
	CPU    float64 `json:"cpu"`
}

// pass is the time of one decode of a whole file.
type pass struct{ wall, cpu float64 }

func main() {
	log.SetFlags(0)
	repo := repoRoot()
	repeats := flag.Int("repeats", 5, "timed passes per file and reader")
	scale := flag.Float64("scale", 1.0, "size of the generated datasets (1.0: 60-100 MB of Arrow data each)")
	dir := flag.String("dir", filepath.Join(repo, ".tools", "bench-orc"), "where the generated files are kept")
	python := flag.String("python", filepath.Join(repo, ".venv", "bin", "python"), "Python with pyarrow")
	filesRE := flag.String("files", "", "only files whose name matches this regular expression")
	regen := flag.Bool("regen", false, "write the files again even if they exist")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of scand's decode passes to this file")
	memprofile := flag.String("memprofile", "", "write an allocation profile of scand's decode passes to this file")
	noPy := flag.Bool("no-pyarrow", false, "measure scand only")
	wall := flag.Bool("wall", false, "throughput per second of wall time instead of CPU time")
	flag.Parse()

	files, err := generate(*python, *dir, *scale, *regen)
	if err != nil {
		log.Fatal(err)
	}
	td := os.Getenv("SCAND_TESTDATA")
	if td == "" {
		td = filepath.Join(repo, "..", "shared", "testdata")
	}
	for _, name := range []string{"demo-11-zlib", "demo-12-zlib"} {
		p := filepath.Join(td, "orc-examples", name+".orc")
		if st, err := os.Stat(p); err == nil {
			files = append(files, benchFile{Name: name, Path: p, FileBytes: st.Size()})
		}
	}
	if *filesRE != "" {
		re := regexp.MustCompile(*filesRE)
		var keep []benchFile
		for _, f := range files {
			if re.MatchString(f.Name) {
				keep = append(keep, f)
			}
		}
		files = keep
	}
	if len(files) == 0 {
		log.Fatal("no files to measure")
	}

	runtime.GOMAXPROCS(1)
	var py *pyChild
	if !*noPy {
		if py, err = startPyarrow(*python); err != nil {
			log.Fatal(err)
		}
		defer py.close()
	}
	pyVersion := "(not measured)"
	if py != nil {
		pyVersion = py.version
	}
	clock := "CPU time (user+system) of the decoding process"
	if *wall {
		clock = "wall time"
	}
	fmt.Printf("scand ORC decode vs pyarrow %s, one core, %d passes per file, MB/s of Arrow data per second of %s\n",
		pyVersion, *repeats, clock)
	fmt.Printf("(%s, %s/%s, %d CPUs; load average %s)\n\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), loadavg())

	var profFile *os.File
	if *cpuprofile != "" {
		if profFile, err = os.Create(*cpuprofile); err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(profFile); err != nil {
			log.Fatal(err)
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "file\trows\tfile MB\tArrow MB\tscand MB/s min\tmedian\tmax\tpyarrow MB/s min\tmedian\tmax\tscand/pyarrow\t")
	var ratios []float64
	for _, f := range files {
		// Warm-up passes (and the page cache): one of each reader.
		goBytes, rows, _, err := decodeScand(f.Path)
		if err != nil {
			log.Fatalf("%s: scand: %v", f.Name, err)
		}
		nbytes := goBytes
		if py != nil {
			r, err := py.read("warm", f.Path)
			if err != nil {
				log.Fatalf("%s: pyarrow: %v", f.Name, err)
			}
			if r.Rows != rows {
				log.Fatalf("%s: scand read %d rows, pyarrow %d", f.Name, rows, r.Rows)
			}
			nbytes = r.NBytes
		}
		// Timed passes, alternating the readers so that both see the same
		// machine (other load, CPU frequency).
		var sp, pp []pass
		for i := 0; i < *repeats; i++ {
			runtime.GC() // each pass starts from the same heap
			_, _, t, err := decodeScand(f.Path)
			if err != nil {
				log.Fatalf("%s: scand: %v", f.Name, err)
			}
			sp = append(sp, t)
			if py != nil {
				r, err := py.read("time", f.Path)
				if err != nil {
					log.Fatalf("%s: pyarrow: %v", f.Name, err)
				}
				pp = append(pp, pass{wall: r.Wall, cpu: r.CPU})
			}
		}
		mb := float64(nbytes) / 1e6
		smin, smed, smax := stats(mb, sp, *wall)
		row := fmt.Sprintf("%s\t%d\t%.1f\t%.1f\t%.0f\t%.0f\t%.0f\t", f.Name, rows, float64(f.FileBytes)/1e6, mb, smin, smed, smax)
		if py != nil {
			pmin, pmed, pmax := stats(mb, pp, *wall)
			ratios = append(ratios, smed/pmed)
			row += fmt.Sprintf("%.0f\t%.0f\t%.0f\t%.2fx\t", pmin, pmed, pmax, smed/pmed)
		} else {
			row += "-\t-\t-\t-\t"
		}
		fmt.Fprintln(tw, row)
		fmt.Fprintf(os.Stderr, "  %s done\n", f.Name)
	}
	if profFile != nil {
		pprof.StopCPUProfile()
		profFile.Close()
	}
	tw.Flush()
	if len(ratios) > 0 {
		fmt.Printf("\nscand/pyarrow, geometric mean of the per-file median ratios: %.2fx\n", geomean(ratios))
	}
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			log.Fatal(err)
		}
		f.Close()
	}
}

// decodeScand decodes the whole file once and returns the Arrow bytes it
// produced (buffer lengths), the rows, and the time it took.
func decodeScand(path string) (arrowBytes, rows int64, t pass, err error) {
	w0, c0 := time.Now(), cpuTime()
	fh, err := os.Open(path)
	if err != nil {
		return 0, 0, t, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return 0, 0, t, err
	}
	src := &fileSource{File: fh, size: st.Size()}
	ctx := context.Background()
	f, err := orc.Open(ctx, path, src, memory.DefaultAllocator)
	if err != nil {
		return 0, 0, t, err
	}
	defer f.Close()
	p, err := f.Project(nil)
	if err != nil {
		return 0, 0, t, err
	}
	err = f.Read(ctx, p, scanner.ReadOptions{Mem: memory.DefaultAllocator}, func(rec arrow.RecordBatch) error {
		for _, c := range rec.Columns() {
			arrowBytes += bufferBytes(c.Data())
		}
		rows += rec.NumRows()
		rec.Release()
		return nil
	})
	t = pass{wall: time.Since(w0).Seconds(), cpu: cpuTime() - c0}
	return arrowBytes, rows, t, err
}

// cpuTime is this process's user+system CPU seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// fileSource is a scanner.Source over a local file: plain preads, no IO
// scheduler (no prefetch, no metadata cache).
type fileSource struct {
	*os.File
	size int64
}

func (s *fileSource) Size() int64 { return s.size }

func bufferBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += bufferBytes(c)
	}
	return n
}

// pyChild is the pyarrow side: a Python process running pyBench.
type pyChild struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Scanner
	version string
	stderr  bytes.Buffer
}

func startPyarrow(python string) (*pyChild, error) {
	c := &pyChild{cmd: exec.Command(python, "-c", pyBench)}
	c.cmd.Stderr = &c.stderr
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.out = bufio.NewScanner(out)
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %v", python, err)
	}
	if !c.out.Scan() {
		c.cmd.Wait()
		return nil, fmt.Errorf("pyarrow child: %s", c.stderr.String())
	}
	var hello struct{ Version string }
	if err := json.Unmarshal(c.out.Bytes(), &hello); err != nil {
		return nil, err
	}
	c.version = hello.Version
	return c, nil
}

func (c *pyChild) read(cmd, path string) (*pyPass, error) {
	if _, err := fmt.Fprintf(c.in, "%s %s\n", cmd, path); err != nil {
		return nil, fmt.Errorf("%v: %s", err, c.stderr.String())
	}
	if !c.out.Scan() {
		return nil, fmt.Errorf("pyarrow child died: %s", c.stderr.String())
	}
	var r pyPass
	if err := json.Unmarshal(c.out.Bytes(), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (c *pyChild) close() {
	c.in.Close()
	c.cmd.Wait()
}

// generate writes the datasets with gen.py unless dir already holds them
// for this script and scale.
func generate(python, dir string, scale float64, regen bool) ([]benchFile, error) {
	sum := sha256.Sum256(append(append([]byte(nil), genScript...), fmt.Sprint(scale)...))
	stamp := hex.EncodeToString(sum[:8])
	manifest := filepath.Join(dir, "files-"+stamp+".json")
	if !regen {
		if b, err := os.ReadFile(manifest); err == nil {
			var files []benchFile
			if json.Unmarshal(b, &files) == nil && allExist(files) {
				return files, nil
			}
		}
	}
	if _, err := os.Stat(python); err != nil {
		return nil, fmt.Errorf("no Python at %s (run scripts/test.sh once to create .venv, or pass -python): %v", python, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "gen.py")
	if err := os.WriteFile(script, genScript, 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "writing the benchmark files into %s with pyarrow...\n", dir)
	cmd := exec.Command(python, script, dir, fmt.Sprint(scale))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("gen.py: %v", err)
	}
	var files []benchFile
	if err := json.Unmarshal(out, &files); err != nil {
		return nil, fmt.Errorf("gen.py output: %v", err)
	}
	if err := os.WriteFile(manifest, out, 0o644); err != nil {
		return nil, err
	}
	return files, nil
}

func allExist(files []benchFile) bool {
	for _, f := range files {
		if _, err := os.Stat(f.Path); err != nil {
			return false
		}
	}
	return len(files) > 0
}

func stats(mb float64, passes []pass, wall bool) (lo, med, hi float64) {
	s := make([]float64, len(passes))
	for i, p := range passes {
		s[i] = p.cpu
		if wall {
			s[i] = p.wall
		}
	}
	sort.Float64s(s)
	// The fastest pass gives the highest throughput.
	return mb / s[len(s)-1], mb / median(s), mb / s[0]
}

func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func geomean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(v)))
}

func repoRoot() string {
	root, err := repo.Root()
	if err != nil {
		log.Fatal(err)
	}
	return root
}
