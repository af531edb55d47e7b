package scanner

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// structs nests a leaf in n structs: n+1 levels of arrays.
func structs(n int) arrow.DataType {
	t := arrow.DataType(arrow.PrimitiveTypes.Int64)
	for range n {
		t = arrow.StructOf(arrow.Field{Name: "f", Type: t, Nullable: true})
	}
	return t
}

// Arrow IPC carries 64 levels of arrays, the leaf included: a column of
// 63 structs around a leaf is sent, one of 64 is refused as unsupported,
// naming the limit.
func TestCheckNesting(t *testing.T) {
	for _, tc := range []struct {
		typ arrow.DataType
		ok  bool
	}{
		{arrow.PrimitiveTypes.Int64, true},
		{arrow.ListOf(structs(61)), true}, // list + 61 structs + leaf = 63
		{structs(63), true},
		{structs(64), false},
		{arrow.ListOf(structs(63)), false},
	} {
		err := CheckNesting("f.parquet", arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}, {Name: "c", Type: tc.typ}}, nil))
		if tc.ok != (err == nil) {
			t.Errorf("%d levels: err = %v, want ok=%v", nesting(tc.typ), err, tc.ok)
		}
		if err != nil && (!errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "64 levels") || !strings.Contains(err.Error(), `"c"`)) {
			t.Errorf("err = %v, want ErrUnsupported naming the column and the limit", err)
		}
	}
}
