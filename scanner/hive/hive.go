// Package hive reads hive-style partitions from file paths: a directory
// named key=value gives every file below it a column key whose value is
// value, the layout pyarrow's write_to_dataset(partition_cols=...), Spark
// and Hive write. The partition columns join the scan's schema, typed as
// pyarrow.dataset(dir, partitioning="hive") infers them, and a filter on
// them prunes whole files before their footers are read.
package hive

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner/filter"
)

// DefaultPartition is the directory value Hive writes for a null.
const DefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// Value is one key=value directory of a path.
type Value struct {
	Key  string
	Text string // URL-decoded
	Null bool   // the directory was DefaultPartition
}

// Parse returns the key=value directories of path (slash-separated, root-
// or bucket-relative, or an s3:// URI), outermost first. The file name
// itself is never a partition.
func Parse(path string) []Value {
	return nil
}

// Fields infers the partition columns of a scan from the Values of its
// files: one field per key, in order of first appearance, nullable; int32
// when every non-null value of the key is an integer that fits, else
// string (utf8), as pyarrow infers them.
func Fields(files [][]Value) []arrow.Field {
	return nil
}

// Stats gives the statistics of a file's partition column: the value is
// constant across the file.
func Stats(v Value, t arrow.DataType) (filter.ColumnStats, error) {
	return filter.Unknown, errors.New("hive.Stats: not implemented yet")
}

// Column makes an array of n copies of the value, typed t (all nulls for
// a null value, or when the file lacks the key: pass a Value with Null).
func Column(mem memory.Allocator, v Value, t arrow.DataType, n int) (arrow.Array, error) {
	return nil, errors.New("hive.Column: not implemented yet")
}
