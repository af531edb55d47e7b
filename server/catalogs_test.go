package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/source"
	"github.com/scand/scand/source/iceberg"
	"github.com/scand/scand/source/iceberg/icebergtest"
)

// mapCatalog is a catalog of fixed metadata locations; down makes it
// unreachable.
type mapCatalog struct {
	tables map[string]string // "ns.table" -> metadata location
	down   bool
}

func (m mapCatalog) MetadataLocation(_ context.Context, ident []string) (string, error) {
	if m.down {
		return "", &source.Error{Kind: source.Unavailable, Msg: "catalog down cannot be reached"}
	}
	loc, ok := m.tables[strings.Join(ident, ".")]
	if !ok {
		return "", &source.Error{Kind: source.NotFound, Msg: "no table " + strings.Join(ident, ".")}
	}
	return loc, nil
}

func (m mapCatalog) Tables(_ context.Context, fn func([]string, string) error) error {
	if m.down {
		return &source.Error{Kind: source.Unavailable, Msg: "catalog down cannot be reached"}
	}
	for _, k := range slices.Sorted(maps.Keys(m.tables)) {
		if err := fn(strings.Split(k, "."), m.tables[k]); err != nil {
			return err
		}
	}
	return nil
}

func TestCatalogTables(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	tbl, _ := icebergtest.NewTable(t, root, "wh/db/t", tableSchema, nil, nil)
	tbl = icebergtest.Append(t, tbl, tableArrow, tableRows(0, 500))
	away, _ := icebergtest.NewTable(t, outside, "away", tableSchema, nil, nil)
	away = icebergtest.Append(t, away, tableArrow, tableRows(0, 5))
	cats := iceberg.Catalogs{
		"lake": mapCatalog{tables: map[string]string{"db.t": tbl.MetadataLocation(), "db.away": away.MetadataLocation()}},
		"down": mapCatalog{down: true},
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer assertReleased(t, mem)
	client := testServerWith(t, onRoot(t, root, iosched.Options{}, Config{Mem: mem, Catalogs: cats}))
	ctx := context.Background()

	res, err := scanJSON(ctx, client, map[string]any{"table": "lake.db.t", "filter": "id >= 100"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(t, res.records); len(got) != 400 || got[0] != 100 {
		t.Errorf("lake.db.t: %d rows", len(got))
	}
	res.release()

	for _, c := range []struct {
		table string
		code  codes.Code
		msg   string
	}{
		{"lake.db.nope", codes.NotFound, "no table db.nope"},
		{"lake.t", codes.InvalidArgument, "catalog.namespace.table"},
		{"down.db.t", codes.Unavailable, "cannot be reached"},
		{"lake.db.away", codes.PermissionDenied, "away/metadata/"},
	} {
		_, err := scanJSON(ctx, client, map[string]any{"table": c.table})
		if status.Code(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %s naming %q", c.table, err, c.code, c.msg)
		}
	}

	list := func(prefix string) ([]string, error) {
		stream, err := client.ListFlights(ctx, &flight.Criteria{Expression: []byte(prefix)})
		if err != nil {
			return nil, err
		}
		var out []string
		for {
			info, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			if err != nil {
				return out, err
			}
			d := info.GetFlightDescriptor()
			if d.GetType() == flight.DescriptorCMD {
				var cmd struct{ Table string }
				if err := json.Unmarshal(d.GetCmd(), &cmd); err != nil {
					t.Fatal(err)
				}
				out = append(out, "table:"+cmd.Table)
			} else {
				out = append(out, d.GetPath()...)
			}
		}
	}
	got, err := list("lake.")
	if err != nil || !slices.Equal(got, []string{"table:lake.db.t"}) {
		t.Errorf("ListFlights(lake.) = %q, %v", got, err)
	}
	got, err = list("")
	if err != nil || !slices.Contains(got, "table:lake.db.t") || !slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, ".parquet") }) {
		t.Errorf("ListFlights(\"\") = %q, %v: want the files, then the reachable catalogs' tables", got, err)
	}
	if _, err := list("down."); status.Code(err) != codes.Unavailable {
		t.Errorf("ListFlights(down.) = %v, want Unavailable", err)
	}
	if got, err := list("wh/"); err != nil || slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "table:") }) {
		t.Errorf("ListFlights(wh/) = %q, %v: a path prefix lists files only", got, err)
	}
}
