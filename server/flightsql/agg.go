package flightsql

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/sqlfront"
)

// Aggregates are computed from scand's own scans, never from an engine:
//
//   - COUNT(*) without a condition is the plan's total_records: the sum of
//     the files' row counts from their footers. No column data is read.
//   - COUNT(*) with a condition is planned for counting (Backend.PlanCount):
//     row groups whose statistics rule the condition out are skipped as for
//     any scan, those whose statistics prove it true on every row are
//     counted from their row counts, and only the row groups that straddle
//     it are read, the condition's first column alone, counting the rows
//     that come back.
//   - MIN(c) and MAX(c) scan column c (with the condition, if any) and
//     keep the least and greatest non-null value. NaN is skipped (it
//     orders nowhere); a column of only NaN answers NaN, and a column of no
//     values answers NULL.

// aggSchema is the result schema of an aggregate statement over the
// scan's schema.
func aggSchema(st *sqlfront.Statement, scan *arrow.Schema) (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(st.Aggs))
	for i, a := range st.Aggs {
		if a.Kind == sqlfront.CountStar {
			fields[i] = arrow.Field{Name: a.Name, Type: arrow.PrimitiveTypes.Int64}
			continue
		}
		dt, err := leafType(scan, a.Column)
		if err != nil {
			return nil, err
		}
		if !orderable(dt) {
			return nil, status.Errorf(codes.Unimplemented, "flightsql: %s of column %q of type %s: scand computes MIN and MAX of numbers, strings, binary, booleans, decimals, dates, times and timestamps",
				strings.ToUpper(a.Kind.String()), a.Column, dt)
		}
		fields[i] = arrow.Field{Name: a.Name, Type: dt, Nullable: true}
	}
	return arrow.NewSchema(fields, nil), nil
}

// countSchema is the result schema of a statement of COUNT(*) alone, or
// nil when it has another aggregate.
func countSchema(st *sqlfront.Statement) *arrow.Schema {
	fields := make([]arrow.Field, len(st.Aggs))
	for i, a := range st.Aggs {
		if a.Kind != sqlfront.CountStar {
			return nil
		}
		fields[i] = arrow.Field{Name: a.Name, Type: arrow.PrimitiveTypes.Int64}
	}
	return arrow.NewSchema(fields, nil)
}

// leafType is the type of the dotted column name in the scan's schema
// (a struct's field by path); a dictionary column's values' type.
func leafType(sc *arrow.Schema, name string) (arrow.DataType, error) {
	path := strings.Split(name, ".")
	var dt arrow.DataType
	fields := sc.Fields()
	for depth, part := range path {
		found := false
		for _, f := range fields {
			if f.Name == part {
				dt, found = f.Type, true
				break
			}
		}
		if !found {
			return nil, errorf("no column %q in the scan's schema", name)
		}
		if depth < len(path)-1 {
			st, ok := dt.(*arrow.StructType)
			if !ok {
				return nil, errorf("column %q: %s is not a struct", name, strings.Join(path[:depth+1], "."))
			}
			fields = st.Fields()
		}
	}
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	return dt, nil
}

func orderable(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY,
		arrow.BOOL, arrow.DECIMAL128, arrow.DECIMAL256, arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64,
		arrow.TIMESTAMP, arrow.DURATION:
		return true
	}
	return false
}

// aggregate computes an aggregate statement's one row (none for LIMIT 0).
// count is COUNT(*)'s answer when the plan already gave it.
func (s *Server) aggregate(ctx context.Context, st *sqlfront.Statement, req *scandv1.ScanRequest, count *int64) (arrow.RecordBatch, error) {
	onlyCount := true
	for _, a := range st.Aggs {
		onlyCount = onlyCount && a.Kind == sqlfront.CountStar
	}
	// COUNT(*) alone, answered by GetFlightInfo's plan (the footers, or
	// statistics that decided every row group), needs no second one.
	info := &flight.FlightInfo{}
	var schema *arrow.Schema
	var counted int64           // rows the statistics prove match, not read
	var known map[string]Bounds // extremes the statistics gave, not read
	switch {
	case onlyCount && count != nil:
		schema = countSchema(st)
	case onlyCount && st.Where != nil:
		schema = countSchema(st)
		var err error
		if counted, info, err = s.be.PlanCount(ctx, req); err != nil {
			return nil, err
		}
	case noCount(st) && !(st.HasLimit && st.Limit == 0):
		// MIN and MAX alone: exact statistics answer where they can.
		var err error
		if known, info, err = s.be.PlanExtremes(ctx, req, aggColumns(st)); err != nil {
			return nil, err
		}
		scan, err := flightDeserialize(info.Schema, s.mem)
		if err != nil {
			return nil, err
		}
		if schema, err = aggSchema(st, scan); err != nil {
			return nil, err
		}
	default:
		var err error
		if info, err = s.be.Plan(ctx, req); err != nil {
			return nil, err
		}
		scan, err := flightDeserialize(info.Schema, s.mem)
		if err != nil {
			return nil, err
		}
		if schema, err = aggSchema(st, scan); err != nil {
			return nil, err
		}
	}
	if st.HasLimit && st.Limit == 0 {
		return array.NewRecordBatch(schema, emptyColumns(schema, s.mem), 0), nil
	}
	var (
		rows int64
		accs []*extreme
		err  error
	)
	defer func() {
		for _, acc := range accs {
			acc.release()
		}
	}()
	switch {
	case onlyCount && count != nil:
		rows = *count
	case onlyCount && st.Where == nil:
		rows = info.TotalRecords
	default:
		if rows, accs, err = s.scanAggregates(ctx, st, schema, info.Endpoint); err != nil {
			return nil, err
		}
		rows += counted
		for i, a := range st.Aggs {
			if b, ok := known[a.Column]; ok && accs[i] != nil {
				bound := b.Min
				if a.Kind == sqlfront.Max {
					bound = b.Max
				}
				if err := accs[i].addScalar(bound, s.mem); err != nil {
					return nil, err
				}
			}
		}
	}
	cols := make([]arrow.Array, len(st.Aggs))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range st.Aggs {
		if accs == nil || accs[i] == nil {
			b := array.NewInt64Builder(s.mem)
			b.Append(rows)
			cols[i] = b.NewArray()
			b.Release()
			continue
		}
		if cols[i], err = accs[i].result(s.mem); err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(schema, cols, 1), nil
}

// noCount says whether a statement's aggregates are MIN and MAX alone.
func noCount(st *sqlfront.Statement) bool {
	for _, a := range st.Aggs {
		if a.Kind == sqlfront.CountStar {
			return false
		}
	}
	return true
}

// aggColumns are the columns of a statement's MIN and MAX, once each.
func aggColumns(st *sqlfront.Statement) []string {
	var out []string
	for _, a := range st.Aggs {
		if a.Column != "" && !slices.Contains(out, a.Column) {
			out = append(out, a.Column)
		}
	}
	return out
}

// aggReaders is how many endpoints an aggregate reads at once: enough to
// overlap one endpoint's IO with another's decoding, few enough that one
// statement does not take a client's whole share of streams.
const aggReaders = 4

// scanAggregates reads the endpoints, aggReaders at a time, each into
// accumulators of its own, and merges them: the rows, and per aggregate
// its extreme (nil for COUNT(*)).
func (s *Server) scanAggregates(ctx context.Context, st *sqlfront.Statement, schema *arrow.Schema, eps []*flight.FlightEndpoint) (int64, []*extreme, error) {
	newAccs := func() []*extreme {
		accs := make([]*extreme, len(st.Aggs))
		for i, a := range st.Aggs {
			if a.Kind != sqlfront.CountStar {
				accs[i] = &extreme{max: a.Kind == sqlfront.Max, path: strings.Split(a.Column, "."), typ: schema.Field(i).Type}
			}
		}
		return accs
	}
	parts := make([][]*extreme, len(eps))
	counts := make([]int64, len(eps))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(aggReaders)
	for i, ep := range eps {
		accs := newAccs()
		parts[i] = accs
		g.Go(func() error {
			return s.be.Read(gctx, ep.GetTicket().GetTicket(), func(rec arrow.RecordBatch) error {
				counts[i] += rec.NumRows()
				for _, acc := range accs {
					if acc == nil {
						continue
					}
					if err := acc.add(rec); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
	err := g.Wait()
	total, merged := int64(0), newAccs()
	for i, accs := range parts {
		total += counts[i]
		for j, acc := range accs {
			if err == nil && acc != nil {
				if merr := merged[j].merge(acc); merr != nil {
					err = merr
				}
			}
			acc.release()
		}
	}
	if err != nil {
		for _, acc := range merged {
			acc.release()
		}
		return 0, nil, err
	}
	return total, merged, nil
}

func emptyColumns(schema *arrow.Schema, mem memory.Allocator) []arrow.Array {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 0)
	}
	return cols
}

// extreme is the running MIN or MAX of one column: the array holding the
// best value so far (retained) and its index.
type extreme struct {
	max    bool
	path   []string
	typ    arrow.DataType
	best   arrow.Array
	at     int
	sawNaN bool
}

func (e *extreme) release() {
	if e != nil && e.best != nil {
		e.best.Release()
		e.best = nil
	}
}

// add takes one batch's values of the column.
func (e *extreme) add(rec arrow.RecordBatch) error {
	col, valid, err := columnAt(rec, e.path)
	if err != nil {
		return err
	}
	values, index := col, func(i int) int { return i }
	if d, ok := col.(*array.Dictionary); ok {
		values, index = d.Dictionary(), d.GetValueIndex
	}
	bestIdx := -1
	for i := 0; i < col.Len(); i++ {
		if !valid(i) {
			continue
		}
		j := index(i)
		if isNaN(values, j) {
			e.sawNaN = true
			continue
		}
		if bestIdx < 0 {
			bestIdx = j
			continue
		}
		c, ok := compareAt(values, j, values, bestIdx)
		if !ok {
			return status.Errorf(codes.Unimplemented, "flightsql: MIN/MAX of type %s", values.DataType())
		}
		if e.max && c > 0 || !e.max && c < 0 {
			bestIdx = j
		}
	}
	if bestIdx < 0 {
		return nil
	}
	if e.best != nil {
		c, ok := compareAt(values, bestIdx, e.best, e.at)
		if !ok {
			return status.Errorf(codes.Unimplemented, "flightsql: MIN/MAX of type %s", values.DataType())
		}
		if !(e.max && c > 0 || !e.max && c < 0) {
			return nil
		}
		e.best.Release()
	}
	values.Retain()
	e.best, e.at = values, bestIdx
	return nil
}

// addScalar takes a value the statistics gave (nil: none) into e.
func (e *extreme) addScalar(v scalar.Scalar, mem memory.Allocator) error {
	if v == nil || !v.IsValid() {
		return nil
	}
	arr, err := scalar.MakeArrayFromScalar(v, 1, mem)
	if err != nil {
		return status.Errorf(codes.Internal, "flightsql: a statistics bound of type %s: %v", v.DataType(), err)
	}
	if !arrow.TypeEqual(arr.DataType(), e.typ) {
		arr.Release()
		return status.Errorf(codes.Internal, "flightsql: a statistics bound of type %s for a column of type %s", v.DataType(), e.typ)
	}
	o := &extreme{max: e.max, typ: e.typ, best: arr}
	defer o.release()
	return e.merge(o)
}

// merge takes o's extreme into e (o keeps its own reference).
func (e *extreme) merge(o *extreme) error {
	e.sawNaN = e.sawNaN || o.sawNaN
	if o.best == nil {
		return nil
	}
	if e.best != nil {
		c, ok := compareAt(o.best, o.at, e.best, e.at)
		if !ok {
			return status.Errorf(codes.Unimplemented, "flightsql: MIN/MAX of type %s", o.best.DataType())
		}
		if !(e.max && c > 0 || !e.max && c < 0) {
			return nil
		}
		e.best.Release()
	}
	o.best.Retain()
	e.best, e.at = o.best, o.at
	return nil
}

// result is the one-row array of the extreme: NULL without values, NaN
// when NaN was all there was.
func (e *extreme) result(mem memory.Allocator) (arrow.Array, error) {
	if e.best == nil {
		if e.sawNaN {
			switch e.typ.ID() {
			case arrow.FLOAT64:
				b := array.NewFloat64Builder(mem)
				defer b.Release()
				b.Append(math.NaN())
				return b.NewArray(), nil
			case arrow.FLOAT32:
				b := array.NewFloat32Builder(mem)
				defer b.Release()
				b.Append(float32(math.NaN()))
				return b.NewArray(), nil
			}
		}
		return array.MakeArrayOfNull(mem, e.typ, 1), nil
	}
	sc, err := scalar.GetScalar(e.best, e.at)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "flightsql: reading the %s: %v", map[bool]string{true: "maximum", false: "minimum"}[e.max], err)
	}
	if r, ok := sc.(scalar.Releasable); ok {
		defer r.Release()
	}
	return scalar.MakeArrayFromScalar(sc, 1, mem)
}

// columnAt is the array at the dotted path of rec, and whether row i has
// a value (it and every struct above it are valid).
func columnAt(rec arrow.RecordBatch, path []string) (arrow.Array, func(int) bool, error) {
	idx := rec.Schema().FieldIndices(path[0])
	if len(idx) == 0 {
		return nil, nil, status.Errorf(codes.Internal, "flightsql: column %q missing from a batch", path[0])
	}
	col := rec.Column(idx[0])
	parents := []arrow.Array{}
	for _, part := range path[1:] {
		st, ok := col.(*array.Struct)
		if !ok {
			return nil, nil, status.Errorf(codes.Internal, "flightsql: %q is not a struct in a batch", part)
		}
		i, ok := st.DataType().(*arrow.StructType).FieldIdx(part)
		if !ok {
			return nil, nil, status.Errorf(codes.Internal, "flightsql: field %q missing from a batch", part)
		}
		parents = append(parents, col)
		col = st.Field(i)
	}
	leaf := col
	return leaf, func(i int) bool {
		for _, p := range parents {
			if p.IsNull(i) {
				return false
			}
		}
		return leaf.IsValid(i)
	}, nil
}

func isNaN(a arrow.Array, i int) bool {
	switch a := a.(type) {
	case *array.Float64:
		return math.IsNaN(a.Value(i))
	case *array.Float32:
		return math.IsNaN(float64(a.Value(i)))
	}
	return false
}

// compareAt orders a[i] against b[j], two arrays of the same type; false
// for a type it cannot order.
func compareAt(a arrow.Array, i int, b arrow.Array, j int) (int, bool) {
	switch a := a.(type) {
	case *array.Int8:
		return cmp.Compare(a.Value(i), b.(*array.Int8).Value(j)), true
	case *array.Int16:
		return cmp.Compare(a.Value(i), b.(*array.Int16).Value(j)), true
	case *array.Int32:
		return cmp.Compare(a.Value(i), b.(*array.Int32).Value(j)), true
	case *array.Int64:
		return cmp.Compare(a.Value(i), b.(*array.Int64).Value(j)), true
	case *array.Uint8:
		return cmp.Compare(a.Value(i), b.(*array.Uint8).Value(j)), true
	case *array.Uint16:
		return cmp.Compare(a.Value(i), b.(*array.Uint16).Value(j)), true
	case *array.Uint32:
		return cmp.Compare(a.Value(i), b.(*array.Uint32).Value(j)), true
	case *array.Uint64:
		return cmp.Compare(a.Value(i), b.(*array.Uint64).Value(j)), true
	case *array.Float32:
		return cmp.Compare(a.Value(i), b.(*array.Float32).Value(j)), true
	case *array.Float64:
		return cmp.Compare(a.Value(i), b.(*array.Float64).Value(j)), true
	case *array.Date32:
		return cmp.Compare(a.Value(i), b.(*array.Date32).Value(j)), true
	case *array.Date64:
		return cmp.Compare(a.Value(i), b.(*array.Date64).Value(j)), true
	case *array.Time32:
		return cmp.Compare(a.Value(i), b.(*array.Time32).Value(j)), true
	case *array.Time64:
		return cmp.Compare(a.Value(i), b.(*array.Time64).Value(j)), true
	case *array.Timestamp:
		return cmp.Compare(a.Value(i), b.(*array.Timestamp).Value(j)), true
	case *array.Duration:
		return cmp.Compare(a.Value(i), b.(*array.Duration).Value(j)), true
	case *array.Boolean:
		x, y := a.Value(i), b.(*array.Boolean).Value(j)
		return cmp.Compare(boolInt(x), boolInt(y)), true
	case *array.String:
		return strings.Compare(a.Value(i), b.(*array.String).Value(j)), true
	case *array.LargeString:
		return strings.Compare(a.Value(i), b.(*array.LargeString).Value(j)), true
	case *array.Binary:
		return bytes.Compare(a.Value(i), b.(*array.Binary).Value(j)), true
	case *array.LargeBinary:
		return bytes.Compare(a.Value(i), b.(*array.LargeBinary).Value(j)), true
	case *array.Decimal128:
		return a.Value(i).Cmp(b.(*array.Decimal128).Value(j)), true
	case *array.Decimal256:
		return a.Value(i).Cmp(b.(*array.Decimal256).Value(j)), true
	}
	return 0, false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func flightDeserialize(b []byte, mem memory.Allocator) (*arrow.Schema, error) {
	sc, err := flight.DeserializeSchema(b, mem)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "flightsql: decoding the scan's schema: %v", err)
	}
	return sc, nil
}
