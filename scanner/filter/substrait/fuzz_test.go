package substrait

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	pb "github.com/substrait-io/substrait-protobuf/go/substraitpb"

	"github.com/scand/scand/scanner/filter"
)

// FuzzTranslate checks that no message makes Translate panic, and that
// every failure is a *filter.Error or wraps filter.ErrTooComplex. Seeds:
// the pyarrow fixtures and a few built messages.
func FuzzTranslate(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.bin")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	ns := testSchema(false)
	f.Add(message(f, ns, cmpFuncs, call(1, cast(tI64, ref(0)), i64(5))))
	f.Add(message(f, ns, cmpFuncs, call(2, in(ref(4, 0), i64(1)), call(4, ref(4, 1, 0), str("a%")))))
	f.Add(message(f, testSchema(true), cmpFuncs, call(1, ref(6), cast(tI64, lit(&pb.Expression_Literal{
		LiteralType: &pb.Expression_Literal_I32{I32: 5}})))))
	f.Fuzz(func(t *testing.T, msg []byte) {
		e, err := Translate(msg)
		if err != nil {
			var fe *filter.Error
			if !errors.As(err, &fe) && !errors.Is(err, filter.ErrTooComplex) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		_ = e.String()
	})
}
