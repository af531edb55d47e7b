// Command snapload is bench/delta's timer of scand's own snapshot load: for
// each table name read on stdin (relative to -root), source/delta replays
// the table's log into its file list with nothing cached (a new Table, no
// snapshot cache), and prints the seconds and the file count, one line per
// table. bench/delta/run.py interleaves it with deltalake's DeltaTable(path)
// and get_add_actions(), the peer of its cold measure: the snapshot load
// alone, without the data files' footers that scand's planning reads.
//
//	echo dv | go run ./bench/delta/snapload -root /tmp/scand-bench-delta
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/scand/scand/source/delta"
	"github.com/scand/scand/storage/local"
)

func main() {
	root := flag.String("root", ".", "the directory the tables are under")
	flag.Parse()
	bucket, err := local.New(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		name := strings.TrimSpace(in.Text())
		if name == "" {
			continue
		}
		started := time.Now()
		t, err := delta.New(bucket, name, delta.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		l, err := t.List(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintf(out, "%.6f %d\n", time.Since(started).Seconds(), len(l.Files))
		out.Flush()
	}
}
