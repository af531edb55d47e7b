package filter

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// Eval uses arrow-go's kernels under their arrow-go names: "not" is
// pyarrow's invert and "is_not_null" its is_valid. What arrow-go lacks
// (string matching) is in like.go, and where a kernel's answer differs
// from the form's semantics (is_in on booleans and on float zeros and NaN)
// the input is adjusted, with the reason at the adjustment.

// evaluator evaluates one bound predicate on one record batch. Every
// method returning an arrow.Array returns a new reference the caller
// releases; on error nothing is left allocated.
type evaluator struct {
	ctx   context.Context // carries mem, for the compute kernels
	p     *Predicate
	rec   arrow.RecordBatch
	mem   memory.Allocator
	nrows int
}

func newEvaluator(ctx context.Context, p *Predicate, rec arrow.RecordBatch, mem memory.Allocator) *evaluator {
	return &evaluator{ctx: exec.WithAllocator(ctx, mem), p: p, rec: rec, mem: mem, nrows: int(rec.NumRows())}
}

// eval evaluates a term to a boolean array of the batch's length.
func (ev *evaluator) eval(e Expr) (arrow.Array, error) {
	if err := ev.ctx.Err(); err != nil {
		return nil, err
	}
	switch n := e.(type) {
	case *Column:
		return ev.column(n)
	case *Literal:
		return scalar.MakeArrayFromScalar(n.Value.(scalar.Scalar), ev.nrows, ev.mem)
	case *Compare:
		return ev.compare(n)
	case *And:
		return ev.and(n.Terms)
	case *Or:
		return ev.fold(n.Terms, "or_kleene", false)
	case *Not:
		return ev.unary("not", n.Term)
	case *IsNull:
		if n.Negated {
			return ev.unary("is_not_null", n.Term)
		}
		return ev.unary("is_null", n.Term)
	case *In:
		return ev.in(n)
	case *Like:
		return ev.like(n)
	case *StartsWith:
		return ev.startsWith(n)
	}
	return nil, fmt.Errorf("filter: cannot evaluate %T; was the predicate bound?", e)
}

// call runs a compute function and returns its result as an array.
func (ev *evaluator) call(name string, opts compute.FunctionOptions, args ...compute.Datum) (arrow.Array, error) {
	out, err := compute.CallFunction(ev.ctx, name, opts, args...)
	if err != nil {
		return nil, fmt.Errorf("filter: %s: %w", name, err)
	}
	defer out.Release()
	return out.(*compute.ArrayDatum).MakeArray(), nil
}

// unary applies a boolean kernel to one term.
func (ev *evaluator) unary(name string, term Expr) (arrow.Array, error) {
	var in arrow.Array
	var err error
	if c, ok := term.(*Column); ok && (name == "is_null" || name == "is_not_null") {
		// IS NULL of any column, not only boolean ones, from validity
		// alone: a dictionary's indices give it when no entry is null.
		raw, vt := ev.raw(c)
		if d, ok := raw.(*array.Dictionary); ok && d.Dictionary().NullN() == 0 {
			defer raw.Release()
			return nullMask(d, name == "is_not_null", ev.mem), nil
		}
		defer raw.Release()
		in, err = ev.decode(raw, vt)
	} else if c, ok := term.(*Column); ok {
		in, err = ev.column(c)
	} else {
		in, err = ev.eval(term)
	}
	if err != nil {
		return nil, err
	}
	defer in.Release()
	if name == "is_null" || name == "is_not_null" {
		return nullMask(in, name == "is_not_null", ev.mem), nil
	}
	return ev.call(name, nil, &compute.ArrayDatum{Value: in.Data()})
}

// nullMask is IS NULL (valid false) or IS NOT NULL (valid true) of in,
// read off its validity bitmap. arrow-go's is_null kernels dispatch on the
// input type and panic on decimals (castBinaryDecimalArgs with one
// argument), and the bitmap is all they would read anyway.
func nullMask(in arrow.Array, valid bool, mem memory.Allocator) arrow.Array {
	n := in.Len()
	bits := in.NullBitmapBytes()
	if in.NullN() == 0 || len(bits) == 0 {
		return constantBool(!valid == (in.NullN() == n && n > 0), n, mem)
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	out := buf.Bytes()
	bitutil.CopyBitmap(bits, in.Data().Offset(), n, out, 0)
	if !valid {
		for i := range out {
			out[i] = ^out[i]
		}
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// constantBool is n copies of v.
func constantBool(v bool, n int, mem memory.Allocator) arrow.Array {
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	for range n {
		b.UnsafeAppend(v)
	}
	return b.NewArray()
}

// and evaluates a conjunction: the cheapest terms for this batch first
// (termCost), and none after a prefix that is false on every row, since
// false AND anything is false, unknown included. Kleene AND is
// commutative, so the order changes no answer, only what it costs.
func (ev *evaluator) and(terms []Expr) (arrow.Array, error) {
	if len(terms) < 2 {
		return ev.fold(terms, "and_kleene", true)
	}
	ordered := slices.Clone(terms)
	slices.SortStableFunc(ordered, func(a, b Expr) int { return cmp.Compare(ev.termCost(a), ev.termCost(b)) })
	acc, err := ev.eval(ordered[0])
	if err != nil {
		return nil, err
	}
	for _, t := range ordered[1:] {
		if acc.NullN() == 0 && countTrue(acc.(*array.Boolean)) == 0 {
			return acc, nil // false on every row
		}
		next, err := ev.eval(t)
		if err != nil {
			acc.Release()
			return nil, err
		}
		out, err := ev.call("and_kleene", nil, &compute.ArrayDatum{Value: acc.Data()}, &compute.ArrayDatum{Value: next.Data()})
		acc.Release()
		next.Release()
		if err != nil {
			return nil, err
		}
		acc = out
	}
	return acc, nil
}

// termCost ranks what a term costs on this batch, cheapest first: IS
// NULL (a bitmap), a test of one column the batch holds as a dictionary
// (once per entry), a comparison of fixed-width values with a literal,
// then the rest (strings row by row, two columns, nested logic).
func (ev *evaluator) termCost(e Expr) int {
	var c *Column
	switch n := e.(type) {
	case *IsNull:
		if _, ok := n.Term.(*Column); ok {
			return 0
		}
		return 3
	case *Compare:
		if _, ok := n.Right.(*Literal); !ok {
			return 3
		}
		c = n.Left.(*Column)
	case *In:
		c = n.Term.(*Column)
	case *Like:
		c = n.Term.(*Column)
	case *StartsWith:
		c = n.Term.(*Column)
	default:
		return 3
	}
	if len(c.Path) == 1 {
		if idx := ev.rec.Schema().FieldIndices(c.Path[0]); len(idx) > 0 {
			if d, ok := ev.rec.Column(idx[0]).(*array.Dictionary); ok && d.Dictionary().Len() <= d.Len() {
				return 1
			}
		}
	}
	if _, ok := e.(*Compare); ok && !arrow.IsBaseBinary(valueType(ev.p.types[pathKey(c.Path)]).ID()) {
		return 2
	}
	return 3
}

// fold combines terms with a Kleene kernel; no terms is the operator's
// identity (AND of nothing is true, OR of nothing false).
func (ev *evaluator) fold(terms []Expr, name string, identity bool) (arrow.Array, error) {
	if len(terms) == 0 {
		return scalar.MakeArrayFromScalar(scalar.NewBooleanScalar(identity), ev.nrows, ev.mem)
	}
	acc, err := ev.eval(terms[0])
	if err != nil {
		return nil, err
	}
	for _, t := range terms[1:] {
		next, err := ev.eval(t)
		if err != nil {
			acc.Release()
			return nil, err
		}
		out, err := ev.call(name, nil, &compute.ArrayDatum{Value: acc.Data()}, &compute.ArrayDatum{Value: next.Data()})
		acc.Release()
		next.Release()
		if err != nil {
			return nil, err
		}
		acc = out
	}
	return acc, nil
}

var compareFuncs = [...]string{Eq: "equal", Ne: "not_equal", Lt: "less", Le: "less_equal", Gt: "greater", Ge: "greater_equal"}

func (ev *evaluator) compare(c *Compare) (arrow.Array, error) {
	if lit, ok := c.Right.(*Literal); ok {
		// arrow-go's float kernels compare as IEEE 754 says (NaN is
		// unequal to everything, itself included), which is what the form
		// asks; TestCompareOracle pins it, SIMD loops included.
		return ev.overValues(c.Left.(*Column), func(vals arrow.Array) (arrow.Array, error) {
			if b, ok := lit.Value.(*scalar.Boolean); ok && c.Op != Eq && c.Op != Ne {
				return ev.orderBooleans(c.Op, vals, b)
			}
			return ev.call(compareFuncs[c.Op], nil, &compute.ArrayDatum{Value: vals.Data()},
				compute.NewDatumWithoutOwning(lit.Value.(scalar.Scalar)))
		})
	}
	left, err := ev.column(c.Left.(*Column))
	if err != nil {
		return nil, err
	}
	defer left.Release()
	right, err := ev.column(c.Right.(*Column))
	if err != nil {
		return nil, err
	}
	defer right.Release()
	if left, right, err = ev.castCommon(left, right); err != nil {
		return nil, err
	}
	if left.DataType().ID() == arrow.BOOL && c.Op != Eq && c.Op != Ne {
		// No ordering kernel for booleans (see orderBooleans); the defers
		// above release the boolean arrays.
		if left, err = ev.castTo(left, arrow.PrimitiveTypes.Int8); err != nil {
			return nil, err
		}
		defer left.Release()
		if right, err = ev.castTo(right, arrow.PrimitiveTypes.Int8); err != nil {
			return nil, err
		}
		defer right.Release()
	}
	defer left.Release()
	defer right.Release()
	return ev.call(compareFuncs[c.Op], nil, &compute.ArrayDatum{Value: left.Data()}, &compute.ArrayDatum{Value: right.Data()})
}

// orderBooleans compares a boolean column with a boolean literal by <,
// <=, > or >= (false < true): arrow-go has no ordering kernel for
// booleans, so both go through int8.
func (ev *evaluator) orderBooleans(op CompareOp, vals arrow.Array, b *scalar.Boolean) (arrow.Array, error) {
	ints, err := ev.castTo(vals, arrow.PrimitiveTypes.Int8)
	if err != nil {
		return nil, err
	}
	defer ints.Release()
	lit := scalar.MakeNullScalar(arrow.PrimitiveTypes.Int8)
	if b.IsValid() {
		var v int8
		if b.Value {
			v = 1
		}
		lit = scalar.NewInt8Scalar(v)
	}
	return ev.call(compareFuncs[op], nil, &compute.ArrayDatum{Value: ints.Data()}, compute.NewDatumWithoutOwning(lit))
}

// castCommon casts two columns to the type they compare as (Bind checked
// there is one). It returns new references.
func (ev *evaluator) castCommon(a, b arrow.Array) (arrow.Array, arrow.Array, error) {
	ct := commonType(a.DataType(), b.DataType())
	if ct == nil {
		return nil, nil, fmt.Errorf("filter: cannot compare %s with %s", a.DataType(), b.DataType())
	}
	ca, err := ev.castTo(a, ct)
	if err != nil {
		return nil, nil, err
	}
	cb, err := ev.castTo(b, ct)
	if err != nil {
		ca.Release()
		return nil, nil, err
	}
	return ca, cb, nil
}

// castTo returns arr as type dt, a new reference.
func (ev *evaluator) castTo(arr arrow.Array, dt arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(arr.DataType(), dt) {
		arr.Retain()
		return arr, nil
	}
	if arr.DataType().ID() == arrow.BOOL {
		cp, err := ev.unsliced(arr)
		if err != nil {
			return nil, err
		}
		defer cp.Release()
		arr = cp
	}
	out, err := compute.CastArray(ev.ctx, arr, compute.SafeCastOptions(dt))
	if err != nil {
		return nil, fmt.Errorf("filter: casting %s to %s: %w", arr.DataType(), dt, err)
	}
	return out, nil
}

// column is the values of a bound column in the batch, decoded to its
// value type (see valueType).
func (ev *evaluator) column(c *Column) (arrow.Array, error) {
	raw, vt := ev.raw(c)
	defer raw.Release()
	return ev.decode(raw, vt)
}

// raw is a bound column as the batch holds it (a new reference), and the
// value type it was bound with. A column the batch lacks, top-level or
// inside a struct, reads as nulls, so that files written before a column
// was added answer as SQL does for a missing value.
func (ev *evaluator) raw(c *Column) (arrow.Array, arrow.DataType) {
	vt := valueType(ev.p.types[pathKey(c.Path)])
	idx := ev.rec.Schema().FieldIndices(c.Path[0])
	if len(idx) == 0 {
		return array.MakeArrayOfNull(ev.mem, vt, ev.nrows), vt
	}
	arr := ev.rec.Column(idx[0])
	arr.Retain()
	for _, name := range c.Path[1:] {
		child, ok := structChild(ev.mem, arr, name)
		arr.Release()
		if !ok {
			return array.MakeArrayOfNull(ev.mem, vt, ev.nrows), vt
		}
		arr = child
	}
	return arr, vt
}

// overValues evaluates f, a test of one column's values that is null
// exactly where the value is (a comparison with a literal, SQL's IN, LIKE).
// On a dictionary column no larger than the batch, f runs once per
// dictionary entry and its answers are taken by the indices, instead of
// decoding the dictionary into every row; take makes null indices null,
// which is why tests answering non-null for null (IS NULL, pyarrow's IN)
// do not come here.
func (ev *evaluator) overValues(c *Column, f func(values arrow.Array) (arrow.Array, error)) (arrow.Array, error) {
	raw, vt := ev.raw(c)
	defer raw.Release()
	d, ok := raw.(*array.Dictionary)
	if !ok || d.Dictionary().Len() > d.Len() {
		vals, err := ev.decode(raw, vt)
		if err != nil {
			return nil, err
		}
		defer vals.Release()
		return f(vals)
	}
	vals, err := ev.decode(d.Dictionary(), vt)
	if err != nil {
		return nil, err
	}
	defer vals.Release()
	perEntry, err := f(vals)
	if err != nil {
		return nil, err
	}
	defer perEntry.Release()
	if out, ok := mapEntries(perEntry, d.Indices(), ev.mem); ok {
		return out, nil
	}
	out, err := compute.TakeArray(ev.ctx, perEntry, d.Indices())
	if err != nil {
		return nil, fmt.Errorf("filter: taking dictionary answers: %w", err)
	}
	return out, nil
}

// mapEntries is take(perEntry, indices) for a dictionary's boolean
// answers without nulls and int32 indices, through a byte per entry and
// eight rows a byte: arrow-go's take checks and gathers bit by bit, at
// several times the cost. ok is false, with nothing allocated, where it
// does not apply or an index is out of the entries' range (take then
// reports it).
func mapEntries(perEntry, indices arrow.Array, mem memory.Allocator) (arrow.Array, bool) {
	per, ok := perEntry.(*array.Boolean)
	idx, ok2 := indices.(*array.Int32)
	if !ok || !ok2 || per.NullN() > 0 {
		return nil, false
	}
	m := per.Len()
	lut := make([]byte, m)
	for j := range m {
		if per.Value(j) {
			lut[j] = 1
		}
	}
	vals := idx.Int32Values()
	n := len(vals)
	nulls := idx.NullN()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	out := buf.Bytes()
	for i := 0; i < n; i += 8 {
		var b byte
		for k := range min(8, n-i) {
			e := uint32(vals[i+k])
			if e >= uint32(m) {
				if nulls == 0 || idx.IsValid(i+k) {
					buf.Release()
					return nil, false
				}
				continue // a null index's slot may hold anything
			}
			b |= lut[e] << k
		}
		out[i/8] = b
	}
	var valid *memory.Buffer
	if nulls > 0 {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(idx.NullBitmapBytes(), idx.Data().Offset(), n, valid.Bytes(), 0)
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{valid, buf}, nil, nulls, 0)
	buf.Release()
	if valid != nil {
		valid.Release()
	}
	defer data.Release()
	return array.MakeFromData(data), true
}

// decode returns arr as vt, the value type the predicate was bound with, a
// new reference: dictionaries are expanded (take of the dictionary by the
// indices, which keeps null indices null) and views cast to their
// offset-based form, because arrow-go's comparison kernels take neither.
// A batch whose column differs from the bound schema in more than encoding
// (large_utf8 for utf8) is cast too, safely: a value that does not fit is
// an error, not a wrong answer.
func (ev *evaluator) decode(arr arrow.Array, vt arrow.DataType) (arrow.Array, error) {
	if d, ok := arr.(*array.Dictionary); ok {
		dense, err := compute.TakeArray(ev.ctx, d.Dictionary(), d.Indices())
		if err != nil {
			return nil, fmt.Errorf("filter: decoding dictionary: %w", err)
		}
		defer dense.Release()
		return ev.decode(dense, vt)
	}
	return ev.castTo(arr, vt)
}

// structChild is the named field of a struct array, a new reference, with
// the struct's own nulls folded into the child's: a field of a null struct
// is null. ok is false when arr is not a struct or lacks the field.
func structChild(mem memory.Allocator, arr arrow.Array, name string) (arrow.Array, bool) {
	s, ok := arr.(*array.Struct)
	if !ok {
		return nil, false
	}
	i, ok := s.DataType().(*arrow.StructType).FieldIdx(name)
	if !ok {
		return nil, false
	}
	child := s.Field(i) // sliced to the struct's offset and length
	if s.NullN() == 0 {
		child.Retain()
		return child, true
	}
	return withParentNulls(mem, child, s), true
}

// withParentNulls returns child with validity child AND parent, in a new
// bitmap laid out at the child's offset so that its other buffers are
// shared unchanged.
func withParentNulls(mem memory.Allocator, child arrow.Array, parent arrow.Array) arrow.Array {
	cd := child.Data()
	off, n := int64(cd.Offset()), int64(cd.Len())
	parentBits := parent.NullBitmapBytes()
	pOff := int64(parent.Data().Offset())
	valid := memory.NewResizableBuffer(mem)
	valid.Resize(int(bitutil.BytesForBits(off + n)))
	if childBits := child.NullBitmapBytes(); childBits != nil && child.NullN() > 0 {
		bitutil.BitmapAnd(childBits, parentBits, off, pOff, valid.Bytes(), off, n)
	} else {
		bitutil.CopyBitmap(parentBits, int(pOff), int(n), valid.Bytes(), int(off))
	}
	defer valid.Release()
	bufs := append([]*memory.Buffer{valid}, cd.Buffers()[1:]...)
	var nd *array.Data
	if cd.DataType().ID() == arrow.DICTIONARY { // Dictionary() is a non-nil interface holding a nil *Data otherwise
		nd = array.NewDataWithDictionary(cd.DataType(), cd.Len(), bufs, array.UnknownNullCount, cd.Offset(), cd.Dictionary().(*array.Data))
	} else {
		nd = array.NewData(cd.DataType(), cd.Len(), bufs, cd.Children(), array.UnknownNullCount, cd.Offset())
	}
	defer nd.Release()
	return array.MakeFromData(nd)
}

// in evaluates IN with arrow-go's is_in, whose null behaviours are exactly
// the form's two: Inconclusive is SQL's (a NULL operand, or a non-match
// against a list holding NULL, is unknown), Match is pyarrow's.
func (ev *evaluator) in(n *In) (arrow.Array, error) {
	test := func(vals arrow.Array) (arrow.Array, error) { return ev.isIn(vals, n) }
	var res arrow.Array
	var err error
	if n.Nulls == SQLNulls {
		res, err = ev.overValues(n.Term.(*Column), test)
	} else {
		res, err = ev.overColumn(n.Term.(*Column), test)
	}
	if err != nil || !n.Negated {
		return res, err
	}
	defer res.Release()
	return ev.call("not", nil, &compute.ArrayDatum{Value: res.Data()})
}

// overColumn evaluates f on a column's decoded values.
func (ev *evaluator) overColumn(c *Column, f func(values arrow.Array) (arrow.Array, error)) (arrow.Array, error) {
	vals, err := ev.column(c)
	if err != nil {
		return nil, err
	}
	defer vals.Release()
	return f(vals)
}

// unsliced returns arr (a new reference), or a copy of it that starts at
// offset 0 when it is a slice: arrow-go's cast from booleans and its
// is_in (decimals) misread the values of a sliced array
// (TestSlicedBooleans, TestSlicedIn), and a filter sees slices where a
// late read hands it a kept batch's rows.
func (ev *evaluator) unsliced(arr arrow.Array) (arrow.Array, error) {
	if arr.Data().Offset() == 0 {
		arr.Retain()
		return arr, nil
	}
	cp, err := array.Concatenate([]arrow.Array{arr}, ev.mem)
	if err != nil {
		return nil, fmt.Errorf("filter: copying a sliced %s column: %w", arr.DataType(), err)
	}
	return cp, nil
}

// isIn looks vals up in n's values. arrow-go's is_in accepts boolean
// arrays but hashes them as zero-width values, so that true is "not in
// (TRUE)"; booleans are looked up as int8 instead.
func (ev *evaluator) isIn(vals arrow.Array, n *In) (arrow.Array, error) {
	if vals.Len() == 0 {
		// arrow-go's is_in builds its hash table but never runs the
		// cleanup that releases it when there are no rows (a leak
		// TestEmptyBatch caught); there is nothing to look up anyway.
		return array.MakeArrayOfNull(ev.mem, arrow.FixedWidthTypes.Boolean, 0), nil
	}
	cp, err := ev.unsliced(vals)
	if err != nil {
		return nil, err
	}
	defer cp.Release()
	vals = cp
	if vals.DataType().ID() == arrow.BOOL {
		v8, err := ev.castTo(vals, arrow.PrimitiveTypes.Int8)
		if err != nil {
			return nil, err
		}
		defer v8.Release()
		vals = v8
	}
	set, err := ev.p.sets.get(n, vals.DataType())
	if err != nil {
		return nil, err
	}
	opts := &compute.SetOptions{ValueSet: compute.NewDatumWithoutOwning(set), NullBehavior: compute.NullMatchingInconclusive}
	if n.Nulls == ArrowNulls {
		opts.NullBehavior = compute.NullMatchingMatch
	}
	return ev.call("is_in", opts, &compute.ArrayDatum{Value: vals.Data()})
}

// valueSet builds In's values as an array of the column's value type.
// is_in hashes floats by their bits, so under SQL semantics, where IN is a
// chain of =, the set is corrected to IEEE equality: NaN matches nothing
// (it is dropped) and 0.0 matches -0.0 (both signs are put in). pyarrow's
// semantics keep is_in's own answer.
func valueSet(dt arrow.DataType, n *In) (arrow.Array, error) {
	vals := make([]scalar.Scalar, 0, len(n.Values))
	for _, v := range n.Values {
		sc := v.Value.(scalar.Scalar)
		if !arrow.TypeEqual(sc.DataType(), dt) { // booleans, see isIn
			var err error
			if sc, err = sc.CastTo(dt); err != nil {
				return nil, fmt.Errorf("filter: IN value %s: %w", v, err)
			}
		}
		vals = append(vals, sc)
	}
	if n.Nulls == SQLNulls && isFloat(dt) {
		vals = ieeeSet(vals)
	}
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	if err := scalar.AppendSlice(b, vals); err != nil {
		return nil, fmt.Errorf("filter: building IN list: %w", err)
	}
	return b.NewArray(), nil
}

// valueSets keeps each IN's value array per column type, built the first
// time a batch needs it: building it costs a scalar per value (100,000 of
// them can take longer than the lookups of a whole batch), and the lists
// never change once bound. The arrays are on Go's allocator, not the
// stream's, because they live as long as the predicate, not a batch; the
// binder already bounds their size (100,000 values).
type valueSets struct {
	mu   sync.Mutex
	sets map[valueSetKey]arrow.Array
}

type valueSetKey struct {
	in *In
	dt string // arrow.DataType.Fingerprint
}

func (vs *valueSets) get(n *In, dt arrow.DataType) (arrow.Array, error) {
	key := valueSetKey{n, dt.Fingerprint()}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if set, ok := vs.sets[key]; ok {
		return set, nil
	}
	set, err := valueSet(dt, n)
	if err != nil {
		return nil, err
	}
	if vs.sets == nil {
		vs.sets = map[valueSetKey]arrow.Array{}
	}
	vs.sets[key] = set
	return set, nil
}

func ieeeSet(vals []scalar.Scalar) []scalar.Scalar {
	out := vals[:0:0]
	zero := false
	for _, v := range vals {
		f, ok := floatOf(v)
		switch {
		case !ok:
			out = append(out, v)
		case f != f: // NaN
		case f == 0:
			zero = true
		default:
			out = append(out, v)
		}
	}
	if zero && len(vals) > 0 {
		dt := vals[0].DataType()
		out = append(out, floatScalar(dt, 0), floatScalar(dt, negZero))
	}
	return out
}

var negZero = func() float64 { z := 0.0; return -z }()

// floatOf is a valid float scalar's value.
func floatOf(sc scalar.Scalar) (float64, bool) {
	if !sc.IsValid() {
		return 0, false
	}
	switch v := sc.(type) {
	case *scalar.Float32:
		return float64(v.Value), true
	case *scalar.Float64:
		return v.Value, true
	}
	return 0, false
}

// filterBatch keeps rec's rows where mask is true. All true returns rec
// retained, with no copy; none an empty slice of rec.
func filterBatch(ctx context.Context, rec arrow.RecordBatch, mask arrow.Array, mem memory.Allocator) (arrow.RecordBatch, error) {
	switch trues := countTrue(mask.(*array.Boolean)); trues {
	case int(rec.NumRows()):
		rec.Retain()
		return rec, nil
	case 0:
		return rec.NewSlice(0, 0), nil
	}
	out, err := compute.FilterRecordBatch(exec.WithAllocator(ctx, mem), rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	return out, nil
}

// countTrue counts the valid true values of a boolean array, by bitmaps.
func countTrue(b *array.Boolean) int {
	d := b.Data()
	if d.Len() == 0 {
		return 0 // and the values buffer may be nil
	}
	values := d.Buffers()[1].Bytes()
	if b.NullN() == 0 {
		return bitutil.CountSetBits(values, d.Offset(), d.Len())
	}
	both := make([]byte, bitutil.BytesForBits(int64(d.Len())))
	bitutil.BitmapAnd(values, b.NullBitmapBytes(), int64(d.Offset()), int64(d.Offset()), both, 0, int64(d.Len()))
	return bitutil.CountSetBits(both, 0, d.Len())
}
