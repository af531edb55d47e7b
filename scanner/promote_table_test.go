package scanner_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// TestTablePromotions: Iceberg's decimal widening and date to timestamp
// are Promotable (a table's file is read as its table's type), narrowing
// and zoned timestamps are not, and files without a table still do not
// unify by them.
func TestTablePromotions(t *testing.T) {
	dec := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	ts := func(u arrow.TimeUnit, tz string) arrow.DataType { return &arrow.TimestampType{Unit: u, TimeZone: tz} }
	date := arrow.FixedWidthTypes.Date32
	for _, c := range []struct {
		name     string
		from, to arrow.DataType
		want     bool
	}{
		{"decimal(5,2) to decimal(10,2)", dec(5, 2), dec(10, 2), true},
		{"decimal(9,2) to decimal(38,2)", dec(9, 2), dec(38, 2), true},
		{"decimal(10,2) to decimal(5,2)", dec(10, 2), dec(5, 2), false},
		{"decimal(5,2) to decimal(10,3)", dec(5, 2), dec(10, 3), false},
		{"date to timestamp us", date, ts(arrow.Microsecond, ""), true},
		{"date to timestamp ns", date, ts(arrow.Nanosecond, ""), true},
		{"date to timestamptz", date, ts(arrow.Microsecond, "UTC"), false},
		{"timestamp to date", ts(arrow.Microsecond, ""), date, false},
		{"decimal to double", dec(5, 2), arrow.PrimitiveTypes.Float64, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := scanner.Promotable(c.from, c.to); got != c.want {
				t.Fatalf("Promotable(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
			}
			if !c.want {
				return
			}
			_, err := scanner.Unify([]string{"f0", "f1"}, []*arrow.Schema{
				arrow.NewSchema([]arrow.Field{{Name: "v", Type: c.to, Nullable: true}}, nil),
				arrow.NewSchema([]arrow.Field{{Name: "v", Type: c.from, Nullable: true}}, nil),
			})
			if err == nil {
				t.Fatalf("Unify of files accepted %s as %s: only a table's schema promotes it", c.from, c.to)
			}
		})
	}
}

// TestTablePromotionCasts: the stream casts a promoted column with
// arrow-go's safe cast (compute.SafeCastOptions); the table promotions
// keep every value.
func TestTablePromotionCasts(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ctx := compute.WithAllocator(context.Background(), mem)

	db := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 5, Scale: 2})
	db.AppendValues([]decimal128.Num{decimal128.FromI64(99999), decimal128.FromI64(-12345), decimal128.FromI64(0)}, nil)
	db.AppendNull()
	decs := db.NewArray()
	db.Release()
	defer decs.Release()
	wide := &arrow.Decimal128Type{Precision: 20, Scale: 2}
	out, err := compute.CastArray(ctx, decs, compute.SafeCastOptions(wide))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if !arrow.TypeEqual(out.DataType(), wide) || out.String() != `[999.99 -123.45 0 (null)]` {
		t.Fatalf("decimal cast: %s %s", out.DataType(), out)
	}

	dateB := array.NewDate32Builder(mem)
	dateB.AppendValues([]arrow.Date32{0, 19723, -1}, nil) // 1970-01-01, 2024-01-01, 1969-12-31
	dateB.AppendNull()
	dates := dateB.NewArray()
	dateB.Release()
	defer dates.Release()
	for _, unit := range []arrow.TimeUnit{arrow.Microsecond, arrow.Nanosecond} {
		to := &arrow.TimestampType{Unit: unit}
		got, err := compute.CastArray(ctx, dates, compute.SafeCastOptions(to))
		if err != nil {
			t.Fatal(err)
		}
		perDay := int64(86400_000_000)
		if unit == arrow.Nanosecond {
			perDay *= 1000
		}
		ts := got.(*array.Timestamp)
		for i, day := range []int64{0, 19723, -1} {
			if v := int64(ts.Value(i)); v != day*perDay {
				t.Errorf("%s: day %d is %d, want midnight %d", unit, day, v, day*perDay)
			}
		}
		if !ts.IsNull(3) {
			t.Errorf("%s: null became %v", unit, ts.Value(3))
		}
		got.Release()
	}
}
