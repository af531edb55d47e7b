package files

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
)

// scopeUnder allows the names under prefix.
type scopeUnder string

var errDenied = errors.New("denied")

func (s scopeUnder) Check(name string) error {
	if strings.HasPrefix(name, string(s)) {
		return nil
	}
	return errDenied
}
func (s scopeUnder) CheckFile(info storage.Info) error { return s.Check(info.Name) }
func (s scopeUnder) AllowsFile(info storage.Info) bool { return s.Check(info.Name) == nil }

func touch(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(root, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A listing of hive directories: files once each in request order, the
// partition columns inferred over all of them, a missing key null.
func TestListHivePartitions(t *testing.T) {
	root := t.TempDir()
	touch(t, root, "t/city=ams/day=1/a.parquet", "t/city=ber/day=2/b.parquet", "t/city=ber/c.parquet", "t/_SUCCESS")
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(b, []string{"t/", "t/city=ams/day=1/a.parquet"}, scopeUnder("")).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range l.Files {
		names = append(names, f.Object.Name)
	}
	if got := strings.Join(names, " "); got != "t/city=ams/day=1/a.parquet t/city=ber/c.parquet t/city=ber/day=2/b.parquet" {
		t.Errorf("files %s", got)
	}
	want := []arrow.Field{{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "day", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}
	if !arrow.NewSchema(l.Partitions, nil).Equal(arrow.NewSchema(want, nil)) {
		t.Fatalf("partitions %v, want %v", l.Partitions, want)
	}
	var values []string
	for _, f := range l.Files {
		for _, v := range f.Partition {
			if v == nil {
				values = append(values, "null")
				continue
			}
			values = append(values, v.String())
		}
	}
	if got := strings.Join(values, " "); got != "ams 1 ber null ber 2" {
		t.Errorf("partition values %s", got)
	}
}

// Names outside the scope: refused when asked for directly (before
// storage is touched: a missing name is refused alike), absent from what a
// pattern matches.
func TestListScope(t *testing.T) {
	root := t.TempDir()
	touch(t, root, "open/a.parquet", "secret/b.parquet")
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"secret/b.parquet", "secret/missing.parquet"} {
		if _, err := New(b, []string{name}, scopeUnder("open/")).List(ctx); !errors.Is(err, errDenied) {
			t.Errorf("%s: %v, want the scope's refusal", name, err)
		}
	}
	if _, err := New(b, []string{"secret/"}, scopeUnder("open/")).List(ctx); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a pattern matching only names outside the scope: %v, want not found", err)
	}
	l, err := New(b, []string{"*/*.parquet"}, scopeUnder("open/")).List(ctx)
	if err != nil || len(l.Files) != 1 || l.Files[0].Object.Name != "open/a.parquet" {
		t.Errorf("listing %v, %v: want open/a.parquet only", l, err)
	}
}
