package scope

import (
	"errors"
	"slices"
	"testing"
)

func TestAllows(t *testing.T) {
	cases := []struct {
		roots []string
		name  string
		want  bool
	}{
		// Local prefixes on whole segments.
		{[]string{"data/a"}, "data/a", true},
		{[]string{"data/a"}, "data/a/x.parquet", true},
		{[]string{"data/a"}, "data/a/deep/er/x.parquet", true},
		{[]string{"data/a"}, "data/ab/x", false},
		{[]string{"data/a"}, "data/ab", false},
		{[]string{"data/a"}, "data", false},
		{[]string{"data/a/"}, "data/a/x", true},
		{[]string{"data/a/"}, "data/ab/x", false},
		{[]string{"data/a", "other"}, "other/x", true},
		{[]string{"."}, "anything/at/all.parquet", true},
		{[]string{"./"}, "x", true},
		// Names that are not canonical never pass, whatever the roots.
		{[]string{"."}, "", false},
		{[]string{"."}, ".", false},
		{[]string{"."}, "/etc/passwd", false},
		{[]string{"."}, "../outside", false},
		{[]string{"."}, "..", false},
		{[]string{"data"}, "data/../secret/x", false},
		{[]string{"data"}, "data/./x", false},
		{[]string{"data"}, "data//x", false},
		{[]string{"data"}, "data/x/", false},
		{[]string{"."}, "gs://bucket/x", false},
		{[]string{"."}, "file:///etc/passwd", false},
		// Local roots do not reach S3 and the reverse.
		{[]string{"."}, "s3://bucket/x", false},
		{[]string{"s3://bucket/"}, "bucket/x", false},
		// S3 prefixes.
		{[]string{"s3://bucket/team/"}, "s3://bucket/team/x.parquet", true},
		{[]string{"s3://bucket/team"}, "s3://bucket/team/a/b", true},
		{[]string{"s3://bucket/team/"}, "s3://bucket/teams/x", false},
		{[]string{"s3://bucket/team/"}, "s3://bucket/team", true},
		{[]string{"s3://bucket/team/"}, "s3://other/team/x", false},
		{[]string{"s3://bucket/team/"}, "s3://bucketx/team/x", false},
		{[]string{"s3://bucket"}, "s3://bucket/any/key", true},
		{[]string{"s3://bucket/"}, "s3://bucket/k", true},
		{[]string{"s3://bucket"}, "s3://bucket", false},
		{[]string{"s3://bucket"}, "s3://bucket/", false},
		{[]string{"s3://bucket/team/"}, "s3://bucket/team/../other/x", false},
		{[]string{"s3://bucket"}, "s3://bucket/./x", false},
		{[]string{"s3://bucket/team"}, "s3://bucket/team//x", true}, // a literal key under team/
		{[]string{"s3://bucket/team"}, "s3://bucket//team/x", false},
		{[]string{"s3://bucket"}, "s3:///x", false},
		// No roots: nothing.
		{nil, "x", false},
		{nil, "s3://b/x", false},
	}
	for _, tc := range cases {
		s, err := Parse(tc.roots)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.roots, err)
		}
		if got := s.Allows(tc.name); got != tc.want {
			t.Errorf("roots %q: Allows(%q) = %v, want %v", tc.roots, tc.name, got, tc.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, r := range []string{"", "/abs", "../up", "a/../b", "a//b", "s3://", "s3:///prefix", "s3://b/../x",
		"s3://b/./x", "gs://", "az://c/../x", "abfss://c@acct.dfs.core.windows.net/x", "hdfs://b/x", "a/./b"} {
		if _, err := Parse([]string{r}); !errors.Is(err, ErrBadRoot) {
			t.Errorf("Parse(%q): got %v, want ErrBadRoot", r, err)
		}
	}
}

func TestFilterNeverRevealsOutsideNames(t *testing.T) {
	s, _ := Parse([]string{"data/a", "s3://bucket/team/"})
	names := []string{"data/a/1.parquet", "data/ab/2.parquet", "secret/3.parquet", "data/a/sub/4.orc",
		"s3://bucket/team/5.parquet", "s3://bucket/other/6.parquet", "data/a/../x"}
	got := s.Filter(names)
	want := []string{"data/a/1.parquet", "data/a/sub/4.orc", "s3://bucket/team/5.parquet"}
	if !slices.Equal(got, want) {
		t.Fatalf("Filter = %q, want %q", got, want)
	}
	if got := (Scope{}).Filter(names); len(got) != 0 {
		t.Fatalf("the zero Scope let %q through", got)
	}
}

func TestLimitS3(t *testing.T) {
	allow, err := ParseS3AllowList([]string{"bucket/shared", "s3://open", "wide"})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := Parse([]string{"local", "s3://bucket/", "s3://bucket/shared/team/", "s3://open/x", "s3://closed/y", "s3://wide/"})
	limited := s.LimitS3(allow)
	cases := []struct {
		name string
		want bool
	}{
		{"local/file", true},                   // local roots are untouched
		{"s3://bucket/shared/file", true},      // identity: whole bucket, global: shared/
		{"s3://bucket/private/file", false},    // identity allows, global does not
		{"s3://bucket/shared/team/file", true}, // both
		{"s3://open/x/file", true},             // identity x/ within global whole bucket
		{"s3://open/y/file", false},            // global allows, identity does not
		{"s3://closed/y/file", false},          // not in the allow-list
		{"s3://wide/anything", true},           // both whole bucket
		{"s3://bucket/sharedx/file", false},    // segment boundary
	}
	for _, tc := range cases {
		if got := limited.Allows(tc.name); got != tc.want {
			t.Errorf("LimitS3: Allows(%q) = %v, want %v (scope %s)", tc.name, got, tc.want, limited)
		}
		// The definition: both allow it.
		if both := s.Allows(tc.name) && (allow.Allows(tc.name) || !isS3(tc.name)); both != tc.want {
			t.Errorf("table disagrees with the definition for %q", tc.name)
		}
	}
	if got := s.LimitS3(Scope{}); got.Allows("s3://bucket/shared/x") || !got.Allows("local/x") {
		t.Errorf("an empty allow-list must refuse all S3 and keep local roots: %s", got)
	}
	if _, err := ParseS3AllowList([]string{""}); !errors.Is(err, ErrBadRoot) {
		t.Errorf("empty --s3-allow entry: %v", err)
	}
}

func TestEverything(t *testing.T) {
	all := Everything()
	for _, n := range []string{"a", "a/b/c.parquet", "s3://any/key", "s3://other/deep/key", "gs://any/key", "az://ctr/deep/key"} {
		if !all.Allows(n) {
			t.Errorf("Everything refuses %q", n)
		}
	}
	for _, n := range []string{"../x", "/abs", "s3://b/../x", "s3://b", "gs://b", "az://c/./x", "hdfs://b/x", "abfss://c@a.dfs.core.windows.net/x"} {
		if all.Allows(n) {
			t.Errorf("Everything allows the non-canonical %q", n)
		}
	}
	allow, _ := ParseS3AllowList([]string{"shared/pub"})
	limited := all.LimitS3(allow)
	if !limited.Allows("local/x") || !limited.Allows("s3://shared/pub/x") || limited.Allows("s3://shared/priv/x") ||
		limited.Allows("s3://other/x") {
		t.Errorf("Everything limited to shared/pub is %s", limited)
	}
}

// TestLimitPerStore checks that each store's allow-list narrows that
// store's names only, and that roots of one store never allow another's
// names of the same bucket.
func TestLimitPerStore(t *testing.T) {
	s, err := Parse([]string{"local", "s3://data/", "gs://data/", "az://data/team/"})
	if err != nil {
		t.Fatal(err)
	}
	gsAllow, err := ParseAllowList("gs", []string{"gs://data/pub"})
	if err != nil {
		t.Fatal(err)
	}
	azAllow, _ := ParseAllowList("az", []string{"data"})
	limited := s.Limit("gs", gsAllow).Limit("az", azAllow)
	for name, want := range map[string]bool{
		"local/x":            true,
		"s3://data/x":        true, // no S3 allow-list given
		"gs://data/pub/x":    true,
		"gs://data/priv/x":   false,
		"az://data/team/x":   true,
		"az://data/other/x":  false, // the identity's root is data/team/
		"az://other/team/x":  false,
		"gs://other/pub/x":   false,
		"s3://data/pub/../x": false,
	} {
		if got := limited.Allows(name); got != want {
			t.Errorf("Allows(%q) = %v, want %v (scope %s)", name, got, want, limited)
		}
	}
	only, _ := Parse([]string{"gs://data/"})
	for _, n := range []string{"s3://data/x", "az://data/x"} {
		if only.Allows(n) {
			t.Errorf("gs://data/ allows %q", n)
		}
	}
}

func isS3(name string) bool { return len(name) > 5 && name[:5] == "s3://" }

func FuzzAllows(f *testing.F) {
	f.Add("data/a", "data/a/x")
	f.Add("s3://b/p/", "s3://b/p/../q")
	f.Fuzz(func(t *testing.T, rootText, name string) {
		s, err := Parse([]string{rootText})
		if err != nil || !s.Allows(name) {
			return
		}
		// Whatever is allowed is canonical: no traversal survives.
		n, ok := parseName(name)
		if !ok {
			t.Fatalf("allowed %q which does not parse", name)
		}
		for _, seg := range n.segs {
			if seg == ".." || seg == "." {
				t.Fatalf("root %q allowed %q with a %q segment", rootText, name, seg)
			}
		}
	})
}
