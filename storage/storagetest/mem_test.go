package storagetest_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

func TestAcceptanceMem(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, objects map[string][]byte) storage.Bucket {
		return storagetest.NewMem(objects)
	})
}

func TestWithReadHookKeepsCapabilities(t *testing.T) {
	storagetest.RunWrapper(t, func(b storage.Bucket) storage.Bucket {
		return storagetest.WithReadHook(b, func(context.Context, string, int64, int) error { return nil })
	})
}

// Recheck of a Mem handle fails once the object was replaced or deleted,
// so tests above storage can stand a Mem in for a file rewritten mid-scan.
func TestMemRecheck(t *testing.T) {
	ctx := context.Background()
	m := storagetest.NewMem(map[string][]byte{"a": []byte("one"), "b": []byte("two")})
	for name, change := range map[string]func(){"a": func() { m.Put("a", []byte("uno")) }, "b": func() { m.Delete("b") }} {
		o, err := m.Open(ctx, storage.Info{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if err := o.Recheck(ctx); err != nil {
			t.Errorf("Recheck(%s) before the change = %v", name, err)
		}
		change()
		if err := o.Recheck(ctx); !errors.Is(err, storage.ErrChanged) {
			t.Errorf("Recheck(%s) after the change = %v, want storage.ErrChanged", name, err)
		}
	}
}

func TestMemPutDelete(t *testing.T) {
	ctx := context.Background()
	m := storagetest.NewMem(map[string][]byte{"a": []byte("one")})
	before, err := m.Stat(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	o, err := m.Open(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	m.Put("a", []byte("two!"))
	if _, err := m.Open(ctx, before); !errors.Is(err, storage.ErrChanged) {
		t.Errorf("Open after Put = %v, want storage.ErrChanged", err)
	}
	// The open handle keeps the old content.
	p := make([]byte, 3)
	if err := o.ReadAt(ctx, p, 0); err != nil || string(p) != "one" {
		t.Errorf("ReadAt on the old handle = %q, %v", p, err)
	}
	m.Delete("a")
	if _, err := m.Stat(ctx, "a"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat after Delete = %v, want fs.ErrNotExist", err)
	}
}

func TestWithReadHook(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	var calls []int64
	b := storagetest.WithReadHook(storagetest.NewMem(map[string][]byte{"a": []byte("abcdef")}),
		func(_ context.Context, name string, off int64, n int) error {
			calls = append(calls, off)
			if off == 3 {
				return boom
			}
			return nil
		})
	o, err := b.Open(ctx, storage.Info{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := o.ReadAt(ctx, make([]byte, 2), 0); err != nil {
		t.Errorf("ReadAt(0) = %v", err)
	}
	if err := o.ReadAt(ctx, make([]byte, 2), 3); !errors.Is(err, boom) {
		t.Errorf("ReadAt(3) = %v, want the hook's error", err)
	}
	if len(calls) != 2 {
		t.Errorf("hook called %d times, want 2", len(calls))
	}
}
