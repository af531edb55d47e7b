package wire

import "testing"

func TestParseRoundTrip(t *testing.T) {
	for _, name := range []string{"", "lz4", "zstd"} {
		c, err := ParseCompression(name)
		if err != nil || c.String() != name {
			t.Errorf("ParseCompression(%q) = %v, %v", name, c, err)
		}
	}
	for _, name := range []string{"zerocopy", "stock"} {
		p, err := ParseSendPath(name)
		if err != nil || p.String() != name {
			t.Errorf("ParseSendPath(%q) = %v, %v", name, p, err)
		}
	}
	if p, err := ParseSendPath(""); err != nil || p != SendZeroCopy {
		t.Errorf("ParseSendPath(\"\") = %v, %v; want the default", p, err)
	}
	for _, bad := range []string{"LZ4", "gzip", " "} {
		if _, err := ParseCompression(bad); err == nil {
			t.Errorf("ParseCompression(%q) accepted", bad)
		}
	}
	if _, err := ParseSendPath("fast"); err == nil {
		t.Error("ParseSendPath(\"fast\") accepted")
	}
}
