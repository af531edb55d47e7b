package iceberg

import (
	"fmt"
	"slices"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/codec"
	"github.com/apache/iceberg-go/table"

	"github.com/scand/scand/source"
)

// Task is one task an engine planned itself (ScanRequest.iceberg_tasks):
// iceberg-go's codec.EncodeFileScanTask of a FileScanTask, encoded with
// the partition spec SpecID, the schema of the snapshot the request
// chooses and the table's format version.
type Task struct {
	Data   []byte
	SpecID int
}

// decodeTasks turns the request's tasks into FileScanTasks, and says
// which row groups of each data file they cover: nil for a file some
// task covers whole. A task's residual is dropped: the request's filter
// is applied to every row, and a request whose tasks carry a residual
// without a filter of its own is refused rather than answered with rows
// the engine meant to filter out.
func (s *Source) decodeTasks(meta table.Metadata, schema *ice.Schema) ([]table.FileScanTask, map[string][]int, error) {
	invalid := func(i int, format string, args ...any) error {
		return &source.Error{Kind: source.Invalid, Msg: fmt.Sprintf("iceberg_tasks[%d]: ", i) + fmt.Sprintf(format, args...)}
	}
	var tasks []table.FileScanTask
	groups := map[string][]int{}
	whole := map[string]bool{}
	for i, t := range s.req.Tasks {
		spec := meta.PartitionSpecByID(t.SpecID)
		if spec == nil {
			return nil, nil, invalid(i, "the table has no partition spec %d", t.SpecID)
		}
		task, err := decodeTask(t.Data, *spec, schema, meta.Version())
		if err != nil {
			return nil, nil, invalid(i, "not a task of this table's snapshot, spec %d and format version %d (iceberg-go's codec.EncodeFileScanTask): %v", t.SpecID, meta.Version(), err)
		}
		if task.Residual != nil && !isTrue(task.Residual) && s.req.Filter == nil {
			return nil, nil, invalid(i, "the task carries a residual filter (%s), which scand does not read: send the filter as the request's filter", task.Residual)
		}
		path := task.File.FilePath()
		size := task.File.FileSizeBytes()
		switch {
		case task.Start == 0 && (task.Length == 0 || task.Length >= size):
			whole[path] = true
		default:
			offsets := task.File.SplitOffsets()
			if len(offsets) == 0 {
				return nil, nil, &source.Error{Kind: source.Unimplemented, Msg: fmt.Sprintf("iceberg_tasks[%d]: bytes %d-%d of %s, a data file without split offsets: scand reads a part of a file by its row groups' offsets (send whole files)", i, task.Start, task.Start+task.Length, path)}
			}
			for g, off := range offsets {
				if off >= task.Start && off < task.Start+task.Length {
					groups[path] = append(groups[path], g)
				}
			}
		}
		tasks = append(tasks, task)
	}
	for path, g := range groups {
		if whole[path] {
			delete(groups, path)
			continue
		}
		slices.Sort(g)
		groups[path] = slices.Compact(g)
	}
	return tasks, groups, nil
}

// decodeTask is codec.DecodeFileScanTask, whose avro decoding of hostile
// bytes is kept from crashing the server.
func decodeTask(data []byte, spec ice.PartitionSpec, schema *ice.Schema, version int) (task table.FileScanTask, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("undecodable: %v", r)
		}
	}()
	return codec.DecodeFileScanTask(data, spec, schema, version)
}
