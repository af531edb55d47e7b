package stream

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/planner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/scanner/hive"
)

// A stream applies its ticket's filter to every decoded batch, after
// filling in the partition columns the file lacks (a table's from its
// ticket's partition_values, otherwise hive columns from the file's
// path) and before
// conforming the batch to the scan's schema: the filter may read columns
// the scan does not return (the stream reads them too, readProj) and
// partition columns, which the file does not hold.

// bindFilter binds the ticket's filter to this file, and chooses the
// columns to read and the partition columns to fill. columns are the
// ticket's (nil: all).
func (st *stream) bindFilter(columns []string) error {
	t := st.task
	st.readProj = st.proj
	f, err := planner.ParseFilter(t.GetFilter(), t.GetFilterSubstrait())
	if err != nil {
		return err
	}
	extra, err := st.extraFields()
	if err != nil {
		return err
	}
	fileSchema := st.file.File.Schema()
	if len(t.PartitionValues) > 0 {
		if st.fill, err = tableFill(t.PartitionValues, fileSchema); err != nil {
			return err
		}
	} else {
		st.fill = partitionFill(hive.ByKey(hive.Parse(t.Path)), fileSchema, st.schema, extra)
	}
	if f == nil {
		if eq := st.equalityColumns(); columns != nil && len(eq) > 0 {
			st.readProj, err = st.file.File.Project(planner.ReadColumns(columns, eq))
		}
		return err
	}
	fields := append([]arrow.Field{}, fileSchema.Fields()...)
	for _, x := range extra {
		if !fileSchema.HasField(x.Name) {
			fields = append(fields, x)
		}
	}
	if st.pred, err = filter.Bind(f.Expr, arrow.NewSchema(fields, nil)); err != nil {
		return fmt.Errorf("%s: %w", t.Path, err)
	}
	if columns != nil {
		st.readProj, err = st.file.File.Project(planner.ReadColumns(columns, append(st.pred.Columns(), st.equalityColumns()...)))
	}
	return err
}

// extraFields decodes the ticket's extra fields; none when unset.
func (st *stream) extraFields() ([]arrow.Field, error) {
	if len(st.task.ExtraFields) == 0 {
		return nil, nil
	}
	s, err := planner.DecodeSchema(st.task.ExtraFields, st.cfg.Mem)
	if err != nil {
		return nil, invalidf("ticket's extra fields do not decode (%v): pass GetFlightInfo's tickets unchanged", err)
	}
	return s.Fields(), nil
}

// partitionFill picks the partition columns a stream fills in: fields of
// the scan's schema or of the extra fields that the file lacks and that
// its path gives a value for.
func partitionFill(values map[string]hive.Value, file, scan *arrow.Schema, extra []arrow.Field) []filledColumn {
	var out []filledColumn
	seen := map[string]bool{}
	for _, f := range append(append([]arrow.Field{}, scan.Fields()...), extra...) {
		v, ok := values[f.Name]
		if !ok || seen[f.Name] || file.HasField(f.Name) {
			continue
		}
		seen[f.Name] = true
		out = append(out, filledColumn{field: f, value: v})
	}
	return out
}

// tableFill picks the partition columns of a table's file from its
// ticket's partition_values (the table's metadata's values, never the
// path's): those the file lacks.
func tableFill(encoded []byte, file *arrow.Schema) ([]filledColumn, error) {
	// One value each: Go's allocator, the scalars outlive no stream.
	fields, cols, err := planner.DecodePartitionValues(encoded, memory.DefaultAllocator)
	if err != nil {
		return nil, invalidf("ticket's partition values do not decode (%v): pass GetFlightInfo's tickets unchanged", err)
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	var out []filledColumn
	for i, f := range fields {
		if file.HasField(f.Name) {
			continue
		}
		v, err := scalar.GetScalar(cols[i], 0)
		if err != nil {
			return nil, invalidf("ticket's partition value of %s: %v", f.Name, err)
		}
		out = append(out, filledColumn{field: f, scalar: v})
	}
	return out, nil
}

// filledColumn is a partition column and its value in this file: from
// the path (value), or from the table's metadata (scalar, when set).
type filledColumn struct {
	field  arrow.Field
	value  hive.Value
	scalar scalar.Scalar
}

// column is fc's value repeated n times.
func (fc filledColumn) column(mem memory.Allocator, n int) (arrow.Array, error) {
	if fc.scalar == nil {
		return hive.Column(mem, fc.value, fc.field.Type, n)
	}
	if !fc.scalar.IsValid() {
		return array.MakeArrayOfNull(mem, fc.field.Type, n), nil
	}
	return scalar.MakeArrayFromScalar(fc.scalar, n, mem)
}

// withPartitions returns rec with the partition columns appended. It
// takes over rec.
func (st *stream) withPartitions(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(st.fill) == 0 {
		return rec, nil
	}
	defer rec.Release()
	n := int(rec.NumRows())
	fields := append([]arrow.Field{}, rec.Schema().Fields()...)
	cols := append([]arrow.Array{}, rec.Columns()...)
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for _, fc := range st.fill {
		a, err := fc.column(st.cfg.Mem, n)
		if err != nil {
			return nil, fmt.Errorf("%s: partition column %s: %w", st.task.Path, fc.field.Name, err)
		}
		made = append(made, a)
		fields = append(fields, fc.field)
		cols = append(cols, a)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n)), nil
}

// applyFilter returns the rows of rec the filter keeps, counting what it
// drops. It takes over rec.
func (st *stream) applyFilter(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	st.stats.RowsRead += rec.NumRows()
	if st.pred == nil {
		return rec, nil
	}
	defer rec.Release()
	out, err := st.pred.Filter(st.out.Context(), rec, st.cfg.Mem)
	if err != nil {
		return nil, fmt.Errorf("%s: evaluating the filter: %w", st.task.Path, err)
	}
	st.stats.RowsFiltered += rec.NumRows() - out.NumRows()
	return out, nil
}
