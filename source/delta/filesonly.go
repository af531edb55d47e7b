package delta

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner/hive"
	"github.com/scand/scand/source"
)

// filesOnly returns l as Options.FilesOnly lists it (a copy: l may be
// cached), or the reason it cannot be.
func filesOnly(l *source.Listing, location string, version int64) (*source.Listing, error) {
	refuse := func(format string, args ...any) error {
		return &source.Error{Kind: source.Unimplemented, Msg: fmt.Sprintf("Delta table %q at version %d: ", location, version) + fmt.Sprintf(format, args...)}
	}
	out := *l
	out.Schema = nil
	for _, f := range l.Files {
		switch {
		case len(f.Deletes) > 0:
			return nil, refuse("%s has deletion vectors, which are not applied yet; scand refuses the table rather than return deleted rows", f.Object.Name)
		case f.Columns.Match != source.ByName || f.Columns.Physical != nil:
			return nil, refuse("its columns are mapped (column mapping), which this server does not read yet")
		}
		if err := pathSpellsPartition(f, l); err != nil {
			return nil, refuse("%v; this server takes partition values from hive-style paths only, so far", err)
		}
	}
	return &out, nil
}

// pathSpellsPartition checks that the hive directories of f's path give
// every partition column the value the log gives it, typed as the stream
// will type it.
func pathSpellsPartition(f source.File, l *source.Listing) error {
	if len(l.Partitions) == 0 {
		return nil
	}
	vals := hive.ByKey(hive.Parse(f.Object.Name))
	for i, p := range l.Partitions {
		v, ok := vals[p.Name]
		want := f.Partition[i]
		if !ok {
			return fmt.Errorf("the path of %s has no %s= directory", f.Object.Name, p.Name)
		}
		if v.Null || want == nil {
			if v.Null != (want == nil) {
				return fmt.Errorf("the path of %s gives %s another value than the log", f.Object.Name, p.Name)
			}
			continue
		}
		a, err := hive.Column(memory.DefaultAllocator, v, p.Type, 1)
		if err != nil {
			return fmt.Errorf("the path of %s: %v", f.Object.Name, err)
		}
		got, err := scalar.GetScalar(a, 0)
		a.Release()
		if err != nil || !scalar.Equals(got, want) {
			return fmt.Errorf("the path of %s gives %s another value than the log (%v, not %v)", f.Object.Name, p.Name, got, want)
		}
	}
	return nil
}
