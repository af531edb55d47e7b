package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/scand/scand/storage"
)

// Wrap wraps a bucket, as storage.WithMetrics or WithReadHook do.
type Wrap func(storage.Bucket) storage.Bucket

// RunWrapper checks that a wrapper keeps what its inner bucket declares:
// every object's Capabilities exactly (a wrapper over an object without
// span reads must not claim them, and one over a mapped object must not
// hide it), the inner bucket's Canonical spelling and its ListPruned, and
// the inner object's errors from ReadSpans and Recheck as they are, not
// replaced by errors.ErrUnsupported. Run the acceptance suite (Run) on the
// wrapper too, for the rest of the contract.
func RunWrapper(t *testing.T, wrap Wrap) {
	for _, caps := range []storage.Capabilities{
		{}, {SpanReads: true}, {Mapped: true}, {Mapped: true, SpanReads: true}, {Local: true}, {Mapped: true, Local: true},
	} {
		t.Run(fmt.Sprintf("%+v", caps), func(t *testing.T) { testWrapperCapabilities(t, wrap, caps) })
	}
	t.Run("Canonical", func(t *testing.T) { testWrapperCanonical(t, wrap) })
	t.Run("ListPruned", func(t *testing.T) { testWrapperListPruned(t, wrap) })
}

func testWrapperCapabilities(t *testing.T, wrap Wrap, caps storage.Capabilities) {
	ctx := context.Background()
	inner := &failing{Mem: NewMem(map[string][]byte{"a": []byte("0123456789")})}
	inner.SetCapabilities(caps)
	b := wrap(inner)
	o, err := b.Open(ctx, storage.Info{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if got := o.Capabilities(); got != caps {
		t.Errorf("the wrapped object declares %+v, the inner one %+v", got, caps)
	}
	spans := []storage.Span{{Off: 1, Buf: make([]byte, 2)}, {Off: 6, Buf: make([]byte, 3)}}
	if err := o.ReadSpans(ctx, spans); err != nil || string(spans[0].Buf) != "12" || string(spans[1].Buf) != "678" {
		t.Errorf("ReadSpans = %v (spans %q, %q)", err, spans[0].Buf, spans[1].Buf)
	}
	// The inner object fails from now on: the wrapper passes its errors.
	inner.fail.Store(&errInner)
	for what, err := range map[string]error{
		"ReadAt":    o.ReadAt(ctx, make([]byte, 2), 0),
		"ReadSpans": o.ReadSpans(ctx, spans),
		"Recheck":   o.Recheck(ctx),
	} {
		if !errors.Is(err, errInner) || errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s = %v, want the inner object's error", what, err)
		}
	}
}

func testWrapperCanonical(t *testing.T, wrap Wrap) {
	b := wrap(&failing{Mem: NewMem(nil), canonical: true})
	if got, err := b.Canonical("./x//y"); err != nil || got != "x/y" {
		t.Errorf("Canonical(./x//y) = %q, %v; want the inner bucket's x/y", got, err)
	}
}

func testWrapperListPruned(t *testing.T, wrap Wrap) {
	inner := &failing{Mem: NewMem(map[string][]byte{"d/a": nil, "d/b": nil, "e/c": nil})}
	b := wrap(inner)
	var got []string
	p := storage.Pruning{Dir: func(dir string) bool { return dir == "d/" }, Object: func(name string) bool { return name != "d/b" }}
	if err := b.ListPruned(context.Background(), "", p, func(info storage.Info) error {
		got = append(got, info.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "d/a" {
		t.Errorf("ListPruned through the wrapper = %q, want [d/a]", got)
	}
	if inner.pruned.Load() == 0 {
		t.Error("the wrapper listed without passing the pruning to the inner bucket")
	}
}
