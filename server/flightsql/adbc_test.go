package flightsql_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	adbcflightsql "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestADBCGo: ADBC's Go Flight SQL driver (what ADBC's Python, R and C
// packages wrap) runs statements, a COUNT(*) and GetObjects against the
// front door, and sees refusals with ADBC's status codes.
func TestADBCGo(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db, err := adbcflightsql.NewDriver(mem).NewDatabase(map[string]string{adbc.OptionKeyURI: "grpc://" + f.addr})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cnxn, err := db.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cnxn.Close()
	query := func(sql string) ([][]string, error) {
		st, err := cnxn.NewStatement()
		if err != nil {
			return nil, err
		}
		defer st.Close()
		if err := st.SetSqlQuery(sql); err != nil {
			return nil, err
		}
		rdr, _, err := st.ExecuteQuery(ctx)
		if err != nil {
			return nil, err
		}
		defer rdr.Release()
		var out [][]string
		for rdr.Next() {
			rec := rdr.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				var row []string
				for c := 0; c < int(rec.NumCols()); c++ {
					row = append(row, rec.Column(c).ValueStr(i))
				}
				out = append(out, row)
			}
		}
		return out, rdr.Err()
	}
	rows, err := query("SELECT id, fare FROM trips WHERE id < 3")
	if err != nil || fmt.Sprint(rows) != "[[0 0.5] [1 1.5] [2 2.5]]" {
		t.Errorf("statement: %v, %v", rows, err)
	}
	rows, err = query("SELECT COUNT(*) FROM 'trips/*.parquet'")
	if err != nil || fmt.Sprint(rows) != fmt.Sprintf("[[%d]]", len(f.rows)) {
		t.Errorf("COUNT(*): %v, %v", rows, err)
	}
	var ae adbc.Error
	if _, err := query("SELECT city FROM trips ORDER BY city"); !errors.As(err, &ae) || ae.Code != adbc.StatusNotImplemented {
		t.Errorf("ORDER BY: %v, want NOT_IMPLEMENTED", err)
	}
	if _, err := query("SELECT city FROM trips WHERE"); !errors.As(err, &ae) || ae.Code != adbc.StatusInvalidArgument {
		t.Errorf("a syntax error: %v, want INVALID_ARGUMENT", err)
	}
	objs, err := cnxn.GetObjects(ctx, adbc.ObjectDepthTables, nil, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Release()
	var names []string
	for objs.Next() {
		rec := objs.RecordBatch()
		schemas := rec.Column(1).(*array.List)
		dbs := schemas.ListValues().(*array.Struct)
		tables := dbs.Field(1).(*array.List).ListValues().(*array.Struct)
		tnames := tables.Field(0).(*array.String)
		for i := 0; i < tnames.Len(); i++ {
			names = append(names, tnames.Value(i))
		}
	}
	if fmt.Sprint(names) != "[top.parquet trips]" {
		t.Errorf("GetObjects tables: %v", names)
	}
}
