package iceberg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/scand/scand/scanner/filter/sql"
	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

func fileNames(l *source.Listing) []string {
	var names []string
	for _, f := range l.Files {
		names = append(names, f.Object.Name)
	}
	slices.Sort(names)
	return names
}

// TestListPlanCache: a second listing of the same snapshot and filter is
// the first one's plan, without reading a manifest; another filter, or a
// commit (a new metadata file), plans afresh; the caller's authorizer is
// asked about every object the cached plan read.
func TestListPlanCache(t *testing.T) {
	root := t.TempDir()
	tbl, _ := newTestTable(t, root, "wh/db/t", idNameSchema, nil, nil)
	tbl = appendRows(t, tbl, idName, rows(1, 2, 3))
	tbl = appendRows(t, tbl, idName, rows(100, 200))
	b := testBucket(t, root)
	cache := NewPlanCache(1000)
	ctx := context.Background()
	list := func(filter string, opts Options) (*source.Listing, error) {
		t.Helper()
		req := Request{Table: "wh/db/t"}
		if filter != "" {
			e, err := sql.Parse(filter)
			if err != nil {
				t.Fatal(err)
			}
			req.Filter = e
		}
		opts.Plans = cache
		return New(b, req, opts).List(ctx)
	}
	first, err := list("id > 50", Options{})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := list("", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Without its manifests the table cannot be planned: only the cache
	// can answer now.
	manifests, _ := filepath.Glob(filepath.Join(root, "wh/db/t/metadata/*.avro"))
	saved := map[string][]byte{}
	for _, m := range manifests {
		saved[m], _ = os.ReadFile(m)
		if err := os.Remove(m); err != nil {
			t.Fatal(err)
		}
	}
	var asked []string
	stated := 0
	again, err := list("id > 50", Options{Authorize: func(info storage.Info) error {
		asked = append(asked, info.Name)
		if info.Size > 0 { // what the plan's stat found: a link's target is checked too
			stated++
		}
		return nil
	}})
	if err != nil {
		t.Fatalf("cached plan: %v", err)
	}
	if !slices.Equal(fileNames(again), fileNames(first)) || len(again.Files) != 1 || *again.Table != *first.Table {
		t.Fatalf("cached plan %v %+v, want %v %+v", fileNames(again), again.Table, fileNames(first), first.Table)
	}
	if !slices.ContainsFunc(asked, func(n string) bool { return strings.HasSuffix(n, ".avro") }) {
		t.Fatalf("the authorizer was not asked about the cached plan's manifests: %v", asked)
	}
	if stated == 0 {
		t.Fatal("a cached plan's objects were authorized by name only, not as their stats found them (link targets)")
	}
	if l, err := list("", Options{}); err != nil || !slices.Equal(fileNames(l), fileNames(whole)) || len(l.Files) != 2 {
		t.Fatalf("cached unfiltered plan: %v", err)
	}
	deny := errors.New("denied")
	_, err = list("id > 50", Options{Authorize: func(info storage.Info) error {
		if strings.HasSuffix(info.Name, ".avro") {
			return deny
		}
		return nil
	}})
	if !errors.Is(err, deny) {
		t.Fatalf("got %v, want the authorizer's error on a cached plan", err)
	}
	// Another filter is not in the cache: it reads the (missing) manifests.
	if _, err := list("id < 50", Options{}); err == nil {
		t.Fatal("a filter not cached planned without its manifests")
	}
	for m, data := range saved {
		if err := os.WriteFile(m, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A commit writes a new metadata file: the new snapshot is planned.
	appendRows(t, tbl, idName, rows(300))
	l, err := list("id > 50", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != 2 {
		t.Fatalf("after a commit: %d files, want 2", len(l.Files))
	}
}

func TestPlanCacheBound(t *testing.T) {
	c := NewPlanCache(4)
	tasks := func(n int) []table.FileScanTask { return make([]table.FileScanTask, n) }
	key := func(i int64) planKey { return planKey{metadata: "m", version: "v", snapshot: i} }
	c.put(key(1), &planEntry{tasks: tasks(2)})
	c.put(key(2), &planEntry{tasks: tasks(2)})
	if _, ok := c.get(key(1)); !ok {
		t.Fatal("entry 1 missing")
	}
	c.put(key(3), &planEntry{tasks: tasks(1)}) // evicts 2, the least recently used
	if _, ok := c.get(key(2)); ok {
		t.Fatal("entry 2 kept past the bound")
	}
	if _, ok := c.get(key(1)); !ok {
		t.Fatal("entry 1 evicted")
	}
	c.put(key(4), &planEntry{tasks: tasks(5)}) // over the bound: not kept
	if _, ok := c.get(key(4)); ok {
		t.Fatal("a plan over the whole bound was kept")
	}
	if _, ok := c.get(planKey{metadata: "m", snapshot: 1}); ok {
		t.Fatal("a key without a version hit")
	}
	var nilCache *PlanCache
	nilCache.put(key(1), &planEntry{})
	if _, ok := nilCache.get(key(1)); ok {
		t.Fatal("a nil cache hit")
	}
	if c.files > 4 {
		t.Fatalf("%d files cached, bound 4", c.files)
	}
}

// TestListPlanCacheConcurrent: listings sharing a cache (a server's
// concurrent scans of one snapshot) read the same cached tasks at once.
func TestListPlanCacheConcurrent(t *testing.T) {
	root := t.TempDir()
	tbl, _ := newTestTable(t, root, "wh/db/t", idNameSchema, nil, nil)
	tbl = appendRows(t, tbl, idName, rows(1, 2, 3))
	appendRows(t, tbl, idName, rows(100, 200))
	b := testBucket(t, root)
	cache := NewPlanCache(1000)
	e, err := sql.Parse("id > 50")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			req, want := Request{Table: "wh/db/t"}, 2
			if i%2 == 0 {
				req.Filter, want = e, 1
			}
			l, err := New(b, req, Options{Plans: cache}).List(context.Background())
			if err == nil && len(l.Files) != want {
				err = fmt.Errorf("%d files, want %d", len(l.Files), want)
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestListReadsManifestListOnce: a listing reads the snapshot's manifest
// list once (planning, then the plan's counts, read it from memory).
func TestListReadsManifestListOnce(t *testing.T) {
	root := t.TempDir()
	tbl, _ := newTestTable(t, root, "wh/db/t", idNameSchema, nil, nil)
	tbl = appendRows(t, tbl, idName, rows(1, 2, 3))
	appendRows(t, tbl, idName, rows(100, 200))
	opened := map[string]int{}
	var mu sync.Mutex // manifests are opened, so authorized, concurrently
	l, err := New(testBucket(t, root), Request{Table: "wh/db/t"}, Options{Authorize: func(info storage.Info) error {
		if info.Size > 0 { // the second question, after the stat or open: one per open
			mu.Lock()
			opened[filepath.Base(info.Name)]++
			mu.Unlock()
		}
		return nil
	}}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lists := 0
	for name, n := range opened {
		if strings.HasPrefix(name, "snap-") {
			lists++
			if n != 1 {
				t.Fatalf("manifest list %s opened %d times, want once", name, n)
			}
		}
	}
	if lists != 1 || l.Table == nil || l.Table.ManifestsRead != 2 {
		t.Fatalf("opened %v; plan counts %+v", opened, l.Table)
	}
}
