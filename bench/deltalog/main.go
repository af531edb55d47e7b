// Command deltalog measures a cold Delta snapshot load: source/delta
// replaying a table's log into its file list (no snapshot cache), against
// deltalake's DeltaTable(path) and get_add_actions() in one Python
// process (the peer), in interleaved turns, each row the median.
//
//	go run ./bench/deltalog                  (a few minutes on 2 cores)
//	go run ./bench/deltalog -commits 200     (smaller)
//
// Tables (written once under -dir by deltalake, bench/deltalog/peer.py),
// -files data files per commit, partitioned:
//   - "checkpoint": -commits appends with a checkpoint every 100 commits,
//     so a load reads the last checkpoint and the commits after it;
//   - "commits only": the same appends without a checkpoint, so a load
//     reads every commit.
//
// "scand + stats" also decodes every file's statistics (what a filtered
// scan asks for; a scan without a filter never decodes them).
//
// Python: <repo>/.venv/bin/python (or -python) with deltalake
// (e2e/requirements.txt).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scand/scand/bench/internal/repo"
	"github.com/scand/scand/source/delta"
	"github.com/scand/scand/storage/local"
)

func main() {
	commits := flag.Int("commits", 549, "appends per table")
	files := flag.Int("files", 4, "data files per commit")
	turns := flag.Int("turns", 5, "interleaved turns")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "scand-bench-deltalog"), "where the tables are written (kept between runs)")
	python := flag.String("python", "", "Python with deltalake (default <repo>/.venv/bin/python)")
	flag.Parse()
	root, err := repo.Root()
	check(err)
	if *python == "" {
		*python = filepath.Join(root, ".venv", "bin", "python")
	}
	peer := filepath.Join(root, "bench", "deltalog", "peer.py")
	tables := []struct {
		name, dir string
		interval  int
	}{
		{"checkpoint", fmt.Sprintf("ckpt-%d-%d", *commits, *files), 100},
		{"commits only", fmt.Sprintf("nockpt-%d-%d", *commits, *files), 1 << 30},
	}
	for _, t := range tables {
		path := filepath.Join(*dir, t.dir)
		if _, err := os.Stat(filepath.Join(path, "_delta_log")); err == nil {
			continue
		}
		fmt.Fprintf(os.Stderr, "writing %s (%d commits)...\n", path, *commits)
		cmd := exec.Command(*python, peer, "gen", path, strconv.Itoa(*commits), strconv.Itoa(*files), strconv.Itoa(t.interval))
		cmd.Stderr = os.Stderr
		check(cmd.Run())
	}
	cmd := exec.Command(*python, peer, "serve")
	in, err := cmd.StdinPipe()
	check(err)
	outPipe, err := cmd.StdoutPipe()
	check(err)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	out := bufio.NewReader(outPipe)
	bucket, err := local.New(*dir)
	check(err)

	fmt.Printf("Cold snapshot load, %d commits x %d files, median of %d turns\n\n", *commits, *files, *turns)
	fmt.Printf("| table | files | scand (source/delta) | scand + stats | deltalake | ratio (scand / deltalake) |\n|---|---|---|---|---|---|\n")
	for _, t := range tables {
		var ours, withStats, theirs []time.Duration
		var n int
		for turn := 0; turn < *turns; turn++ {
			start := time.Now()
			tbl, err := delta.New(bucket, t.dir, delta.Options{})
			check(err)
			l, err := tbl.List(context.Background())
			check(err)
			ours = append(ours, time.Since(start))
			n = len(l.Files)

			start = time.Now()
			tbl, err = delta.New(bucket, t.dir, delta.Options{})
			check(err)
			l, err = tbl.List(context.Background())
			check(err)
			for _, f := range l.Files {
				if f.Stats != nil {
					f.Stats.ColumnStats("v")
				}
			}
			withStats = append(withStats, time.Since(start))

			_, err = io.WriteString(in, filepath.Join(*dir, t.dir)+"\n")
			check(err)
			line, err := out.ReadString('\n')
			check(err)
			f := strings.Fields(line)
			secs, err := strconv.ParseFloat(f[0], 64)
			check(err)
			if f[1] != strconv.Itoa(n) {
				check(fmt.Errorf("%s: deltalake lists %s files, scand %d", t.name, f[1], n))
			}
			theirs = append(theirs, time.Duration(secs*float64(time.Second)))
		}
		a, s, b := median(ours), median(withStats), median(theirs)
		ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", d.Seconds()*1000) }
		fmt.Printf("| %s | %d | %s | %s | %s | %.2fx |\n", t.name, n, ms(a), ms(s), ms(b), a.Seconds()/b.Seconds())
	}
	in.Close()
	cmd.Wait()
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "deltalog:", err)
		os.Exit(1)
	}
}
