package iceberg

import (
	"testing"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/codec"
	"github.com/apache/iceberg-go/table"
)

// FuzzDecodeTask: an engine's task bytes come from the network; decoding
// them never crashes the server, whatever they hold.
func FuzzDecodeTask(f *testing.F) {
	spec := *ice.UnpartitionedSpec
	df, err := ice.NewDataFileBuilder(spec, ice.EntryContentData, "s3://b/t/data/f.parquet", ice.ParquetFile, nil, nil, nil, 100, 4096)
	if err != nil {
		f.Fatal(err)
	}
	good, err := codec.EncodeFileScanTask(table.FileScanTask{File: df.Build(), Length: 4096}, spec, idNameSchema, 2)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := decodeTask(data, spec, idNameSchema, 2)
		if err == nil && task.File == nil {
			t.Fatal("decoded a task without a data file")
		}
	})
}
