package planner

import (
	"testing"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// TestDeleteFiles checks the count a Delta plan reports: a vector file
// shared by two data files counts once, each inline vector once.
func TestDeleteFiles(t *testing.T) {
	dv := func(path string) *scandv1.RowDeletes {
		d := &scandv1.RowDeletes{Kind: scandv1.RowDeletes_DELETION_VECTOR, Path: path}
		if path == "" {
			d.Inline = []byte{1}
		}
		return d
	}
	files := []plannedFile{
		{deletes: []*scandv1.RowDeletes{dv("t/deletion_vector_a.bin")}},
		{deletes: []*scandv1.RowDeletes{dv("t/deletion_vector_a.bin")}},
		{deletes: []*scandv1.RowDeletes{dv("")}},
		{deletes: []*scandv1.RowDeletes{dv("")}},
		{},
		{deletes: []*scandv1.RowDeletes{dv("t/deletion_vector_b.bin")}},
	}
	if n := deleteFiles(files); n != 4 {
		t.Fatalf("deleteFiles = %d, want 4", n)
	}
	if n := deleteFiles(nil); n != 0 {
		t.Fatalf("no files: %d", n)
	}
}
