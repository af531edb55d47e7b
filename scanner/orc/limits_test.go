package orc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// chainOfStructs is a type tree of levels types from the root to a long
// leaf, each struct with one field.
func chainOfStructs(levels int) []orcType {
	types := make([]orcType, levels)
	for i := range levels - 1 {
		types[i] = orcType{kind: kindStruct, subtypes: []uint64{uint64(i + 1)}, fieldNames: []string{"f"}}
	}
	types[levels-1] = orcType{kind: kindLong}
	return types
}

// The type tree's depth is capped (256 levels below the root) before
// anything recurses over it; past it the file is unsupported, naming the
// limit. (Columns deeper than Arrow IPC carries are refused apart, by
// scanner.CheckNesting.)
func TestTypeTreeDepthLimit(t *testing.T) {
	for _, tc := range []struct {
		levels int
		ok     bool
	}{{2, true}, {maxTypeDepth + 1, true}, {maxTypeDepth + 2, false}, {6000, false}} {
		err := checkTypes(chainOfStructs(tc.levels))
		if tc.ok != (err == nil) {
			t.Errorf("%d levels: err = %v, want ok=%v", tc.levels, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, scanner.ErrUnsupported) || !strings.Contains(err.Error(), "256 levels")) {
			t.Errorf("%d levels: err = %v, want ErrUnsupported naming the limit", tc.levels, err)
		}
	}
}

// refuser is a metadata budget that refuses everything.
type refuser struct{ asked int64 }

var errRefused = errors.New("no room")

func (r *refuser) Reserve(_ context.Context, n int64) error { r.asked += n; return errRefused }
func (r *refuser) Release(int64)                            {}

// Open reserves the decoded tail from the context's metadata budget
// before decoding it, and fails with the budget's error.
func TestOpenReservesMetadata(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(orcExamples(t), "TestOrcFile.test1.orc"))
	if err != nil {
		t.Fatal(err)
	}
	r := &refuser{}
	_, err = Open(scanner.WithMetadataBudget(context.Background(), r), "test1.orc", &memSource{data: data}, memory.DefaultAllocator)
	if !errors.Is(err, errRefused) || r.asked <= 4096 {
		t.Fatalf("err = %v after asking %d bytes, want the budget's error after asking for the tail", err, r.asked)
	}
	if _, err := openBytes(t, "test1.orc", data); err != nil {
		t.Fatal(err)
	}
}
