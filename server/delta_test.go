package server

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/scanner/deletes"
)

// A Delta table synthesized as the protocol lays it out (deltalake writes
// no deletion vectors): two files of a partitioned table, whose paths do
// not spell the partition values the log gives (one has another p=, the
// other none: the log's values are read), one with
// a deletion vector in a deletion vector file (version byte, then the
// framed vector at offset 1), the other with the protocol's inline example
// (rows 3, 4, 7, 11, 18 and 29), and stats in both adds.

const deltaSpecInlineDV = "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L"

// z85Encode is Z85 (ZeroMQ RFC 32), Delta's encoding of a deletion
// vector file's UUID.
func z85Encode(b []byte) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
	var out []byte
	for i := 0; i+4 <= len(b); i += 4 {
		v := binary.BigEndian.Uint32(b[i:])
		var g [5]byte
		for k := 4; k >= 0; k-- {
			g[k] = alphabet[v%85]
			v /= 85
		}
		out = append(out, g[:]...)
	}
	return string(out)
}

func idBatch(from, to int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil))
	defer b.Release()
	for i := from; i < to; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
	}
	return b.NewRecordBatch()
}

// writeDeltaDVTable writes the table under root/name; corruptCRC breaks the
// file vector's checksum, missingDV leaves its file out.
func writeDeltaDVTable(t *testing.T, root, name string, fileDeleted []uint64, corruptCRC, missingDV bool) {
	t.Helper()
	dir := filepath.Join(root, name)
	for _, f := range []struct {
		path     string
		from, to int64
	}{{"p=wrong/a.parquet", 0, 1000}, {"other/b.parquet", 1000, 1100}} {
		rec := idBatch(f.from, f.to)
		writeParquet(t, dir, f.path, rec, 300)
		rec.Release()
	}
	bm := roaring64.BitmapOf(fileDeleted...)
	framed, err := deletes.EncodeDeletionVector(bm)
	if err != nil {
		t.Fatal(err)
	}
	if corruptCRC {
		framed[len(framed)-1] ^= 0xff
	}
	uuid := []byte("0123456789abcdef")
	if !missingDV {
		if err := os.WriteFile(filepath.Join(dir, "deletion_vector_30313233-3435-3637-3839-616263646566.bin"), append([]byte{1}, framed...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	size := len(framed) - 8
	stats := func(lo, hi, n int64) string {
		s, _ := json.Marshal(map[string]any{"numRecords": n, "minValues": map[string]any{"id": lo}, "maxValues": map[string]any{"id": hi}, "nullCount": map[string]any{"id": 0}})
		return string(s)
	}
	schema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"p","type":"string","nullable":true,"metadata":{}}]}`
	actions := []map[string]any{
		{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": []string{"deletionVectors"}, "writerFeatures": []string{"deletionVectors"}}},
		{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet", "options": map[string]any{}}, "schemaString": schema, "partitionColumns": []string{"p"}, "configuration": map[string]any{}}},
		{"add": map[string]any{"path": "p=wrong/a.parquet", "size": fileSize(t, dir, "p=wrong/a.parquet"), "modificationTime": 0, "dataChange": true,
			"partitionValues": map[string]any{"p": "y"}, "stats": stats(0, 999, 1000),
			"deletionVector": map[string]any{"storageType": "u", "pathOrInlineDv": z85Encode(uuid), "offset": 1, "sizeInBytes": size, "cardinality": len(fileDeleted)}}},
		{"add": map[string]any{"path": "other/b.parquet", "size": fileSize(t, dir, "other/b.parquet"), "modificationTime": 0, "dataChange": true,
			"partitionValues": map[string]any{"p": "x"}, "stats": stats(1000, 1099, 100),
			"deletionVector": map[string]any{"storageType": "i", "pathOrInlineDv": deltaSpecInlineDV, "sizeInBytes": 40, "cardinality": 6}}},
	}
	var log strings.Builder
	for _, a := range actions {
		b, _ := json.Marshal(a)
		log.Write(b)
		log.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000000.json"), []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, dir, name string) int64 {
	t.Helper()
	st, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func TestScanDeltaDeletionVectors(t *testing.T) {
	root := t.TempDir()
	fileDeleted := []uint64{0, 299, 300, 301, 650, 999}
	writeDeltaDVTable(t, root, "t", fileDeleted, false, false)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer assertReleased(t, mem)
	client := testServerWith(t, onRoot(t, root, iosched.Options{}, Config{Mem: mem}))
	ctx := context.Background()

	var want []int64
	for i := int64(0); i < 1100; i++ {
		if slices.Contains(fileDeleted, uint64(i)) || slices.Contains([]int64{3, 4, 7, 11, 18, 29}, i-1000) {
			continue
		}
		want = append(want, i)
	}
	res, err := scanJSON(ctx, client, map[string]any{"table": "t"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(t, res.records); !slices.Equal(got, want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	// The plan counts the vectors attached: the file one and the inline one.
	var deletes struct {
		DeleteFiles int64 `json:"delete_files"`
	}
	if err := json.Unmarshal(res.info.AppMetadata, &deletes); err != nil || deletes.DeleteFiles != 2 {
		t.Fatalf("plan stats %s: %v", res.info.AppMetadata, err)
	}
	// The partition column, which the files do not hold, from the log.
	for _, r := range res.records {
		p := r.Column(r.Schema().FieldIndices("p")[0]).(*array.String)
		for i := 0; i < int(r.NumRows()); i++ {
			id := r.Column(0).(*array.Int64).Value(i)
			if wantP := map[bool]string{true: "y", false: "x"}[id < 1000]; p.Value(i) != wantP {
				t.Fatalf("id %d: p %q, want %q", id, p.Value(i), wantP)
			}
		}
	}
	res.release()

	// A filter the first file's stats rule out: it is pruned before its
	// footer is read, and the second file's deletes still apply.
	res, err = scanJSON(ctx, client, map[string]any{"table": "t", "filter": "id >= 1000", "columns": []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(t, res.records); !slices.Equal(got, want[len(want)-94:]) {
		t.Fatalf("filtered: %v", got)
	}
	var ps struct {
		Pruned      int64 `json:"files_pruned_by_stats"`
		DeleteFiles int64 `json:"delete_files"`
	}
	// Only the kept file's vector counts.
	if err := json.Unmarshal(res.info.AppMetadata, &ps); err != nil || ps.Pruned != 1 || ps.DeleteFiles != 1 {
		t.Fatalf("plan stats %s: %v", res.info.AppMetadata, err)
	}
	res.release()

	// A filter on the partition column, and on it with another column:
	// the values are the log's in the filter too.
	for _, f := range []string{"p = 'x'", "p = 'x' OR id < 5"} {
		res, err = scanJSON(ctx, client, map[string]any{"table": "t", "filter": f, "columns": []string{"id", "p"}})
		if err != nil {
			t.Fatal(err)
		}
		var wantP []int64
		for _, id := range want {
			if id >= 1000 || (f != "p = 'x'" && id < 5) {
				wantP = append(wantP, id)
			}
		}
		if got := ids(t, res.records); !slices.Equal(got, wantP) {
			t.Fatalf("%s: %v, want %v", f, got, wantP)
		}
		res.release()
	}

	// Rows across the row-group boundary of the first file, filtered.
	res, err = scanJSON(ctx, client, map[string]any{"table": "t", "filter": "id >= 290 AND id < 310", "columns": []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	var wantR []int64
	for _, id := range want {
		if id >= 290 && id < 310 {
			wantR = append(wantR, id)
		}
	}
	if got := ids(t, res.records); !slices.Equal(got, wantR) {
		t.Fatalf("across row groups: %v, want %v", got, wantR)
	}
	res.release()
}

func TestScanDeltaDeletionVectorBroken(t *testing.T) {
	root := t.TempDir()
	writeDeltaDVTable(t, root, "crc", []uint64{1, 2}, true, false)
	writeDeltaDVTable(t, root, "missing", []uint64{1, 2}, false, true)
	client := testServer(t, root, memory.NewGoAllocator())
	for _, c := range []struct {
		table string
		codes []codes.Code
	}{{"crc", []codes.Code{codes.DataLoss}}, {"missing", []codes.Code{codes.DataLoss}}} {
		res, err := scanJSON(context.Background(), client, map[string]any{"table": c.table, "columns": []string{"id"}})
		if err == nil {
			res.release()
			t.Fatalf("%s: the scan returned rows without their deletes", c.table)
		}
		if !slices.Contains(c.codes, status.Code(err)) {
			t.Errorf("%s: %v, want one of %v", c.table, err, c.codes)
		}
	}
}
