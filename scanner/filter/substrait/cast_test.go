package substrait

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestWidens(t *testing.T) {
	p, b := arrow.PrimitiveTypes, arrow.BinaryTypes
	cases := []struct {
		from, to arrow.DataType
		want     bool
	}{
		{p.Int8, p.Int64, true},
		{p.Int64, p.Int32, false},
		{p.Uint8, p.Uint16, true},
		{p.Uint32, p.Int64, true},
		{p.Uint32, p.Int32, false},
		{p.Int32, p.Uint64, false},
		{p.Int32, p.Float64, true},
		{p.Int64, p.Float64, false},
		{p.Int16, p.Float32, true},
		{p.Int32, p.Float32, false},
		{p.Float32, p.Float64, true},
		{p.Float64, p.Float32, false},
		{b.String, b.LargeString, true},
		{b.Binary, b.LargeBinary, true},
		{b.String, b.Binary, false},
		{arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Microsecond}, false},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, &arrow.TimestampType{Unit: arrow.Microsecond}, true},
	}
	for _, c := range cases {
		if got := widens(c.from, c.to); got != c.want {
			t.Errorf("widens(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
