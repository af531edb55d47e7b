package orc

import (
	"fmt"
	"testing"
)

func rawStream(b []byte) *stream { return newStream(nil, b) }

// Examples from the ORC v1 specification.
func TestRLESpecExamples(t *testing.T) {
	seq := func(from, to, step int64) []int64 {
		var out []int64
		for v := from; v != to+step; v += step {
			out = append(out, v)
		}
		return out
	}
	rep := func(v int64, n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		v2     bool
		signed bool
		in     []byte
		want   []int64
	}{
		{"v1 run", false, false, []byte{0x61, 0x00, 0x07}, rep(7, 100)},
		{"v1 run with delta", false, false, []byte{0x61, 0xff, 0x64}, seq(100, 1, -1)},
		{"v1 literals", false, false, []byte{0xfb, 0x02, 0x03, 0x04, 0x07, 0x0b}, []int64{2, 3, 4, 7, 11}},
		{"v2 short repeat", true, false, []byte{0x0a, 0x27, 0x10}, rep(10000, 5)},
		{"v2 direct", true, false, []byte{0x5e, 0x03, 0x5c, 0xa1, 0xab, 0x1e, 0xde, 0xad, 0xbe, 0xef}, []int64{23713, 43806, 57005, 48879}},
		{"v2 patched base", true, false, []byte{0x8e, 0x13, 0x2b, 0x21, 0x07, 0xd0, 0x1e, 0x00, 0x14, 0x70, 0x28, 0x32, 0x3c, 0x46, 0x50, 0x5a, 0x64, 0x6e, 0x78, 0x82, 0x8c, 0x96, 0xa0, 0xaa, 0xb4, 0xbe, 0xfc, 0xe8},
			[]int64{2030, 2000, 2020, 1000000, 2040, 2050, 2060, 2070, 2080, 2090, 2100, 2110, 2120, 2130, 2140, 2150, 2160, 2170, 2180, 2190}},
		{"v2 delta", true, false, []byte{0xc6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46}, []int64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29}},
		{"v2 signed short repeat", true, true, []byte{0x00, 0x03}, []int64{-2, -2, -2}},
		{"v2 fixed delta", true, true, []byte{0xc0, 0x04, 0x02, 0x01}, []int64{1, 0, -1, -2, -3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]int64, len(tc.want))
			if err := newIntDecoder(rawStream(tc.in), tc.v2, tc.signed).next(got); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
			// Asking for one more value hits the end of the stream.
			if err := newIntDecoder(rawStream(tc.in), tc.v2, tc.signed).next(make([]int64, len(tc.want)+1)); err == nil {
				t.Error("no error past the end")
			}
		})
	}

	b := make([]byte, 102)
	if err := newByteRLE(rawStream([]byte{0x61, 0x00, 0xfe, 0x44, 0x45})).next(b); err != nil {
		t.Fatal(err)
	}
	if b[99] != 0 || b[100] != 0x44 || b[101] != 0x45 {
		t.Errorf("byte RLE: %v", b[98:])
	}
	bools := make([]bool, 16)
	if err := newBoolRLE(rawStream([]byte{0xff, 0x80, 0xff, 0x01})).next(bools); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(bools) != fmt.Sprint([]bool{true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true}) {
		t.Errorf("bool RLE: %v", bools)
	}
}

func TestVarint128(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want string
	}{
		{[]byte{0x00}, "0"}, {[]byte{0x01}, "-1"}, {[]byte{0x02}, "1"}, {[]byte{0x80, 0x01}, "64"},
		{[]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "9223372036854775807"},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "-9223372036854775808"},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}, "9223372036854775808"},
	} {
		v, err := readVarint128(rawStream(tc.in))
		if err != nil || v.BigInt().String() != tc.want {
			t.Errorf("% x: got %v %v, want %s", tc.in, v.BigInt(), err, tc.want)
		}
	}
	if _, err := readVarint128(rawStream([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})); err == nil {
		t.Error("overlong varint accepted")
	}
}

// TestUnpackBitsPaths checks the in-chunk path of readBits against the
// one that gathers a group across chunks (forced by one-byte "original"
// chunks).
func TestUnpackBitsPaths(t *testing.T) {
	data := make([]byte, 300)
	x := uint32(12345)
	for i := range data {
		x = x*1664525 + 1013904223
		data[i] = byte(x >> 24)
	}
	var chunked []byte
	for _, b := range data {
		chunked = append(chunked, 3, 0, 0, b) // 1-byte original chunk
	}
	for _, width := range widthTable {
		n := len(data) * 8 / width
		fast := make([]int64, n)
		slow := make([]int64, n)
		if err := readBits(&rleV2{s: rawStream(data)}, fast, width, 0); err != nil {
			t.Fatal(err)
		}
		if err := readBits(&rleV2{s: newStream(newCodec(compZlib, 1<<10), chunked)}, slow, width, 0); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(fast) != fmt.Sprint(slow) {
			t.Fatalf("width %d: fast and slow paths differ", width)
		}
	}
}

// TestUnpackBitsLengths compares unpackBits with a bit-by-bit reference for
// every width and run lengths 0..80 (the 8-byte-load path, the tail, and
// their boundary).
func TestUnpackBitsLengths(t *testing.T) {
	x := uint32(777)
	for _, width := range widthTable {
		for n := 0; n <= 80; n++ {
			b := make([]byte, (n*width+7)/8)
			for i := range b {
				x = x*1664525 + 1013904223
				b[i] = byte(x >> 24)
			}
			got := make([]int64, n)
			unpackBits(got, width, b, 0)
			zz := make([]int64, n)
			unpackBits(zz, width, b, 1)
			got32, zz32 := make([]int32, n), make([]int32, n)
			unpackBits(got32, width, b, 0)
			unpackBits(zz32, width, b, 1)
			got16, zz16 := make([]int16, n), make([]int16, n)
			unpackBits(got16, width, b, 0)
			unpackBits(zz16, width, b, 1)
			for i := 0; i < n; i++ {
				var v uint64
				for k := 0; k < width; k++ {
					bit := i*width + k
					v = v<<1 | uint64(b[bit/8]>>(7-bit%8)&1)
				}
				z := unzigzag(v)
				if got[i] != int64(v) || zz[i] != z {
					t.Fatalf("width %d, n %d, value %d: got %#x and zigzag %d, want %#x and %d", width, n, i, got[i], zz[i], v, z)
				}
				if got32[i] != int32(v) || zz32[i] != int32(z) || got16[i] != int16(v) || zz16[i] != int16(z) {
					t.Fatalf("width %d, n %d, value %d: narrow values %d %d %d %d, want the truncations of %#x and %d", width, n, i, got32[i], zz32[i], got16[i], zz16[i], v, z)
				}
			}
		}
	}
}
