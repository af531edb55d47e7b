package rangecache

import (
	"bytes"
	"errors"
	"testing"
)

func TestPageFormatRoundTrip(t *testing.T) {
	o := Object{Store: "http://s3", Name: "s3://b/k", Version: `"etag"`, Size: 5000}
	sum := o.keySum(3, 1024)
	data := bytes.Repeat([]byte("abc"), 300)
	b := encodePage(sum, data)
	got, err := decodePage(b, sum)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("decodePage = %d bytes, %v; want the data back", len(got), err)
	}
	other := o.keySum(4, 1024)
	tests := map[string]struct {
		b   []byte
		sum keySum
	}{
		"other key":      {b: b, sum: other},
		"torn":           {b: b[:len(b)/2], sum: sum},
		"header only":    {b: b[:headerSize], sum: sum},
		"short header":   {b: b[:10], sum: sum},
		"empty":          {b: nil, sum: sum},
		"bit flip data":  {b: flip(b, headerSize+7), sum: sum},
		"bit flip len":   {b: flip(b, 24), sum: sum},
		"bit flip magic": {b: flip(b, 1), sum: sum},
		"trailing bytes": {b: append(bytes.Clone(b), 0), sum: sum},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := decodePage(tc.b, tc.sum); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decodePage = %v, want ErrCorrupt", err)
			}
		})
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x10
	return c
}

func TestFileNameRoundTrip(t *testing.T) {
	for _, k := range []pageKey{{obj: 0, ver: 0, page: 0}, {obj: 1<<64 - 1, ver: 42, page: 123456}} {
		name := k.fileName()
		got, ok := parseFileName(name[:2], name[3:])
		if !ok || got != k {
			t.Fatalf("parseFileName(%q) = %+v, %v; want %+v", name, got, ok, k)
		}
	}
	for _, bad := range []string{"x.page", "0000000000000000-0000000000000000-01.page", "0000000000000000-0000000000000000--1.page",
		"0000000000000000-0000000000000000-1.tmp", "ff00000000000000-0000000000000000-1.page"} {
		if _, ok := parseFileName("00", bad); ok {
			t.Errorf("parseFileName(%q) accepted", bad)
		}
	}
}

// FuzzDecodePage: the page reader never panics on any file content, and
// accepts only what encodePage would write for that key.
func FuzzDecodePage(f *testing.F) {
	o := Object{Name: "s3://b/k", Version: "v", Size: 100}
	sum := o.keySum(0, 4096)
	f.Add(encodePage(sum, []byte("hello")))
	f.Add(encodePage(sum, nil))
	f.Add([]byte("SCPG"))
	f.Add(bytes.Repeat([]byte{0xff}, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		data, err := decodePage(b, sum)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if !bytes.Equal(encodePage(sum, data), b) {
			t.Fatalf("accepted %x, which encodePage would not write", b)
		}
	})
}
