package local

import "testing"

func TestParseReadMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ReadMode
		ok   bool
	}{{"", ReadPread, true}, {"pread", ReadPread, true}, {"mmap", ReadMmap, true}, {"mmap2", 0, false}, {"MMAP", 0, false}} {
		got, err := ParseReadMode(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseReadMode(%q) = %v, %v", tc.in, got, err)
		}
		if tc.ok && tc.in != "" && got.String() != tc.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
}
