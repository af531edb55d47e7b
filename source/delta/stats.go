package delta

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner/filter"
)

// lazyStats is a file's statistics, decoded when first asked for: a scan
// without a filter never pays for decoding the stats JSON of every file.
// It is safe for concurrent use.
type lazyStats struct {
	once   sync.Once
	raw    string
	schema *tableSchema
	hasDV  bool
	stats  filter.StatsMap
}

// ColumnStats implements filter.StatsSource.
func (l *lazyStats) ColumnStats(column string) (filter.ColumnStats, bool) {
	return l.decoded().ColumnStats(column)
}

func (l *lazyStats) decoded() filter.StatsMap {
	l.once.Do(func() {
		l.stats = parseStats(l.raw, l.schema, l.hasDV)
		l.raw = ""
	})
	return l.stats
}

// jsonStats is an add's stats JSON (PROTOCOL.md, "Per-file Statistics").
// Column statistics are keyed by physical name and nest like the schema's
// structs.
type jsonStats struct {
	NumRecords  *int64                     `json:"numRecords"`
	TightBounds *bool                      `json:"tightBounds"`
	MinValues   map[string]json.RawMessage `json:"minValues"`
	MaxValues   map[string]json.RawMessage `json:"maxValues"`
	NullCount   map[string]json.RawMessage `json:"nullCount"`
}

// maxStringStat is the length from which a string maximum is not trusted:
// writers cut string statistics to a prefix (Delta Spark at 32
// characters, Parquet writers at 64 bytes), and a cut maximum is below the
// values it stands for. A minimum cut to a prefix is still a lower bound.
const maxStringStat = 32

// parseStats decodes an add's statistics into column statistics by
// logical dotted name, typed as the schema's columns, keeping only what is
// true of the file's valid rows:
//   - numRecords counts the physical rows, deleted ones included, so with
//     a deletion vector Rows is unknown (-1);
//   - with a deletion vector, or wide bounds (tightBounds false), a null
//     count is kept only when it is 0 (PROTOCOL.md: then every valid row
//     is non-null);
//   - timestamps are cut to milliseconds, so a maximum is raised by
//     999 µs to stay a bound; long string maximums are dropped
//     (maxStringStat); floating-point columns may hold NaN.
//
// Statistics are hints: stats that do not decode give nil (nothing
// known), and a value that does not parse leaves that bound unknown.
//
// Most stats are decoded by scanStats, a scanner of the JSON that copies
// nothing; what it does not take (escapes, non-ASCII text, a key given
// twice) goes through encoding/json, with the same result
// (FuzzStatsDecoders checks that the two agree).
func parseStats(stats string, ts *tableSchema, hasDV bool) filter.StatsMap {
	if stats == "" {
		return nil
	}
	d, ok := scanStats(stats)
	if !ok {
		d, ok = decodeStats(stats)
	}
	if !ok {
		return nil
	}
	return d.apply(ts, hasDV)
}

// Sections of the stats JSON holding per-column statistics.
const (
	secMin = iota
	secMax
	secNulls
)

// decodedStats are the statistics JSON's contents: the per-column values
// by section and physical dotted name, as JSON text.
type decodedStats struct {
	numRecords  *int64
	tightBounds *bool
	entries     []statEntry
}

type statEntry struct {
	section int
	name    string
	raw     string
}

// apply types the entries by the schema (see parseStats).
func (d *decodedStats) apply(ts *tableSchema, hasDV bool) filter.StatsMap {
	rows := int64(-1)
	if d.numRecords != nil && *d.numRecords >= 0 && !hasDV {
		rows = *d.numRecords
	}
	exactNulls := !hasDV && (d.tightBounds == nil || *d.tightBounds)
	out := make(filter.StatsMap)
	for _, e := range d.entries {
		l, ok := ts.leaves[e.name]
		if !ok {
			continue
		}
		cs, ok := out[l.logical]
		if !ok {
			cs = filter.ColumnStats{Nulls: -1, Rows: rows, NaN: isFloat(l.typ)}
		}
		switch e.section {
		case secMin, secMax:
			v := statScalar([]byte(e.raw), l.typ, e.section == secMax)
			if v == nil {
				continue
			}
			if e.section == secMin {
				cs.Min = v
			} else {
				cs.Max = v
			}
		case secNulls:
			n, err := strconv.ParseInt(e.raw, 10, 64)
			if err != nil || n < 0 || (rows >= 0 && n > rows) || (!exactNulls && n != 0) {
				continue
			}
			cs.Nulls = n
		}
		out[l.logical] = cs
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// decodeStats decodes stats with encoding/json.
func decodeStats(stats string) (*decodedStats, bool) {
	var js jsonStats
	dec := json.NewDecoder(strings.NewReader(stats))
	dec.UseNumber()
	if err := dec.Decode(&js); err != nil {
		return nil, false
	}
	d := &decodedStats{numRecords: js.NumRecords, tightBounds: js.TightBounds}
	for sec, m := range []map[string]json.RawMessage{js.MinValues, js.MaxValues, js.NullCount} {
		walkStats(m, "", func(name string, raw json.RawMessage) {
			d.entries = append(d.entries, statEntry{section: sec, name: name, raw: string(raw)})
		})
	}
	return d, true
}

// maxStatsDepth bounds how deep statistics nest (structs in structs).
const maxStatsDepth = 64

// walkStats calls fn for every leaf statistic of m, by dotted name.
func walkStats(m map[string]json.RawMessage, prefix string, fn func(string, json.RawMessage)) {
	if strings.Count(prefix, ".") >= maxStatsDepth {
		return
	}
	for k, raw := range m {
		name := join(prefix, k)
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && raw[0] == '{' {
			var sub map[string]json.RawMessage
			if json.Unmarshal(raw, &sub) == nil {
				walkStats(sub, name, fn)
			}
			continue
		}
		fn(name, raw)
	}
}

func isFloat(t arrow.DataType) bool {
	return t.ID() == arrow.FLOAT32 || t.ID() == arrow.FLOAT64
}

// statScalar parses one bound; nil when it is not usable as one.
func statScalar(raw json.RawMessage, typ arrow.DataType, isMax bool) scalar.Scalar {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var str string
	quoted := raw[0] == '"'
	if quoted {
		if json.Unmarshal(raw, &str) != nil {
			return nil
		}
	}
	num := string(raw)
	switch t := typ.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type:
		if quoted {
			return nil
		}
		v, err := strconv.ParseInt(num, 10, intBits(typ))
		if err != nil {
			return nil
		}
		return intScalar(v, typ)
	case *arrow.Float32Type, *arrow.Float64Type:
		if quoted {
			return nil // "NaN", "Infinity": no bound
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || !floatBound(v) {
			return nil
		}
		if t.ID() == arrow.FLOAT32 {
			f := float32(v)
			// A double written for a float column may round either way.
			if float64(f) != v {
				return nil
			}
			return scalar.NewFloat32Scalar(f)
		}
		return scalar.NewFloat64Scalar(v)
	case *arrow.StringType:
		if !quoted || !utf8.ValidString(str) || (isMax && len(str) >= maxStringStat) {
			return nil
		}
		return scalar.NewStringScalar(str)
	case *arrow.BooleanType:
		switch num {
		case "true":
			return scalar.NewBooleanScalar(true)
		case "false":
			return scalar.NewBooleanScalar(false)
		}
		return nil
	case *arrow.Date32Type:
		d, err := time.Parse("2006-01-02", str)
		if !quoted || err != nil {
			return nil
		}
		return scalar.NewDate32Scalar(arrow.Date32FromTime(d))
	case *arrow.TimestampType:
		if !quoted {
			return nil
		}
		us, ok := parseTimestamp(str, t.TimeZone != "")
		if !ok {
			return nil
		}
		if isMax {
			us += 999 // statistics are cut to milliseconds
		}
		return scalar.NewTimestampScalar(arrow.Timestamp(us), t)
	case *arrow.Decimal128Type:
		if quoted {
			num = str
		}
		d, err := decimal128.FromString(num, t.Precision, t.Scale)
		if err != nil || !d.FitsInPrecision(t.Precision) || !exactDecimal(num, t.Scale) {
			return nil
		}
		return scalar.NewDecimal128Scalar(d, t)
	}
	return nil
}
