package iceberg

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	ice "github.com/apache/iceberg-go"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/storage/storagetest"
)

// TestManifestDecodeCharge pins what a listing charges for a manifest
// (bucketIO.decodedBytes): what iceberg-go's decoded entries keep stays
// under entryBytes plus columnEntryBytes per column an entry, and under
// manifestDecodeFactor times the manifest's size.
func TestManifestDecodeCharge(t *testing.T) {
	if raceEnabled {
		t.Skip("heap figures are measured without the race detector (scripts/test.sh)")
	}
	for _, columns := range []int{1, 8, 24} {
		t.Run(fmt.Sprintf("%d columns", columns), func(t *testing.T) {
			const files = 4000
			manifest, mf := writeTestManifest(t, files, columns)
			kept := decodedSize(t, mf, manifest, files)
			perEntry := float64(kept) / files
			charged := entryBytes + columnEntryBytes*columns
			t.Logf("%d bytes, %d entries: %.0f bytes an entry decoded (charged %d), %.1fx the manifest (charged %dx without counts)",
				len(manifest), files, perEntry, charged, float64(kept)/float64(len(manifest)), manifestDecodeFactor)
			if perEntry > float64(charged) {
				t.Errorf("an entry keeps %.0f bytes decoded, more than the %d charged", perEntry, charged)
			}
			if float64(kept) > float64(manifestDecodeFactor*len(manifest)) {
				t.Errorf("the entries keep %d bytes, more than manifestDecodeFactor x %d", kept, len(manifest))
			}
		})
	}
}

// writeTestManifest writes a manifest of files data files of a table of
// columns long columns, each with sizes, counts and bounds.
func writeTestManifest(t *testing.T, files, columns int) ([]byte, ice.ManifestFile) {
	t.Helper()
	var fields []ice.NestedField
	for i := 1; i <= columns; i++ {
		fields = append(fields, ice.NestedField{ID: i, Name: fmt.Sprintf("c%d", i), Type: ice.PrimitiveTypes.Int64})
	}
	spec := ice.NewPartitionSpec()
	snap := int64(1)
	var entries []ice.ManifestEntry
	for f := range files {
		counts, bounds := map[int]int64{}, map[int][]byte{}
		for i := 1; i <= columns; i++ {
			counts[i] = int64(f*i + 1000)
			bounds[i] = []byte{byte(f), byte(i), 0, 0, 0, 0, 0, byte(f >> 8)}
		}
		path := fmt.Sprintf("s3://bucket/warehouse/db/t/data/%05d-0-abcdef12-3456-7890-abcd-ef1234567890.parquet", f)
		db, err := ice.NewDataFileBuilder(spec, ice.EntryContentData, path, ice.ParquetFile, nil, nil, nil, 100000, 8<<20)
		if err != nil {
			t.Fatal(err)
		}
		df := db.ColumnSizes(counts).ValueCounts(counts).NullValueCounts(counts).LowerBoundValues(bounds).UpperBoundValues(bounds).Build()
		entries = append(entries, ice.NewManifestEntry(ice.EntryStatusADDED, &snap, nil, nil, df))
	}
	var buf bytes.Buffer
	mf, err := ice.WriteManifest("m.avro", &buf, 2, spec, ice.NewSchema(0, fields...), snap, entries)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mf
}

// decodedSize is what iceberg-go's decoded entries of the manifest keep
// on the heap: the least of three decodes (what other goroutines free
// during one only makes it look smaller, what they allocate larger).
func decodedSize(t *testing.T, mf ice.ManifestFile, manifest []byte, files int) uint64 {
	t.Helper()
	kept := uint64(1 << 62)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got, err := ice.ReadManifest(mf, bytes.NewReader(manifest), true)
		if err != nil || len(got) != files {
			t.Fatalf("%d entries, %v", len(got), err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if after.HeapAlloc > before.HeapAlloc {
			kept = min(kept, after.HeapAlloc-before.HeapAlloc)
		}
		runtime.KeepAlive(got)
	}
	return kept
}

// A listing opens the manifests its snapshot's list names by the length
// the list gives, with no Stat (a HEAD each on an object store), and
// charges each what its entries will take, from the list's file counts.
func TestListOpensManifestsWithoutStat(t *testing.T) {
	root := t.TempDir()
	tbl, _ := newTestTable(t, root, "wh/t", idNameSchema, nil, nil)
	tbl = appendRows(t, tbl, idName, rows(1, 2))
	appendRows(t, tbl, idName, rows(6, 7, 8))
	b := storagetest.Record(testBucket(t, root))
	var charge recordingReserver
	ctx := scanner.WithMetadataBudget(context.Background(), &charge)
	l, err := New(b, Request{Table: "wh/t"}, Options{}).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Table; len(l.Files) != 2 || p == nil || p.ManifestsRead != 2 {
		t.Fatalf("%d files, plan counts %+v", len(l.Files), p)
	}
	for _, s := range b.Stats() {
		if strings.HasSuffix(s, ".avro") && !strings.Contains(s, "/snap-") {
			t.Errorf("manifest %s was stat'ed", s)
		}
	}
	// Two manifests of one file each, a schema of 2 fields.
	if want := 2 * int64(entryBytes+2*columnEntryBytes); charge.n < want {
		t.Errorf("charged %d bytes, want at least %d for the manifests' entries", charge.n, want)
	}
}

// recordingReserver is a scanner.Reserver that sums what it is charged.
type recordingReserver struct {
	mu sync.Mutex
	n  int64
}

func (r *recordingReserver) Reserve(_ context.Context, n int64) error {
	r.mu.Lock()
	r.n += n
	r.mu.Unlock()
	return nil
}

func (r *recordingReserver) Release(n int64) {
	r.mu.Lock()
	r.n -= n
	r.mu.Unlock()
}
