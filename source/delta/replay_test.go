package delta

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

func mustParse(t *testing.T, lines ...string) []action {
	t.Helper()
	acts, err := parseCommit([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

func TestParseCommit(t *testing.T) {
	acts := mustParse(t,
		`{"commitInfo":{"timestamp":1,"inCommitTimestamp":5}}`,
		`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":[]}}`,
		`{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":["p"],"configuration":{"k":"v"}}}`,
		``,
		`{"add":{"path":"p=a/f%20g.parquet","partitionValues":{"p":"a","q":null},"size":10,"modificationTime":2,"dataChange":true,"stats":"{}","deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":40,"cardinality":6}}}`,
		`{"remove":{"path":"old.parquet","deletionTimestamp":3,"dataChange":true}}`,
		`{"txn":{"appId":"a","version":1}}`,
	)
	if len(acts) != 6 {
		t.Fatalf("got %d actions, want 6", len(acts))
	}
	if *acts[0].CommitInfo.InCommitTimestamp != 5 {
		t.Errorf("inCommitTimestamp: %+v", acts[0].CommitInfo)
	}
	if p := acts[1].Protocol; p.MinReaderVersion != 3 || !slices.Equal(p.ReaderFeatures, []string{"deletionVectors"}) {
		t.Errorf("protocol: %+v", p)
	}
	if m := acts[2].MetaData; m.Format.Provider != "parquet" || m.Configuration["k"] != "v" || m.PartitionColumns[0] != "p" {
		t.Errorf("metaData: %+v", m)
	}
	add := acts[3].Add
	if add.Path != "p=a/f%20g.parquet" || *add.PartitionValues["p"] != "a" || add.PartitionValues["q"] != nil || add.Size != 10 {
		t.Errorf("add: %+v", add)
	}
	if got := add.DeletionVector.uniqueID(); got != "uab^-aqEH.-t@S}K{vb[*k^@1" {
		t.Errorf("uniqueID = %q", got)
	}
	if acts[4].Remove.Path != "old.parquet" {
		t.Errorf("remove: %+v", acts[4].Remove)
	}
}

func TestParseCommitRefuses(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"truncated", `{"add":{"path":"a","size":1`, "line 1"},
		{"not an object", `["add"]`, "not a JSON object"},
		{"second line", "{\"commitInfo\":{}}\n{\"add\":{\"size\":1}}", "line 2: add without a path"},
		{"negative size", `{"add":{"path":"a","size":-1}}`, "negative size"},
		{"dv type", `{"add":{"path":"a","size":1,"deletionVector":{"storageType":"x","pathOrInlineDv":"y","sizeInBytes":1,"cardinality":1}}}`, "storage type"},
		{"dv size", `{"add":{"path":"a","size":1,"deletionVector":{"storageType":"i","pathOrInlineDv":"y","sizeInBytes":-1,"cardinality":1}}}`, "bytes"},
		{"wrong type", `{"add":{"path":1}}`, "line 1"},
		{"remove without path", `{"remove":{"deletionTimestamp":1}}`, "remove without a path"},
	} {
		_, err := parseCommit([]byte(c.text))
		if err == nil || !errors.Is(err, errAction) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

func addLine(path, dv string) string {
	if dv == "" {
		return `{"add":{"path":"` + path + `","size":1,"partitionValues":{}}}`
	}
	return `{"add":{"path":"` + path + `","size":1,"partitionValues":{},"deletionVector":{"storageType":"i","pathOrInlineDv":"` + dv + `","sizeInBytes":4,"cardinality":1}}}`
}

func removeLine(path, dv string) string {
	if dv == "" {
		return `{"remove":{"path":"` + path + `"}}`
	}
	return `{"remove":{"path":"` + path + `","deletionVector":{"storageType":"i","pathOrInlineDv":"` + dv + `","sizeInBytes":4,"cardinality":1}}}`
}

// TestReconcile pins the action reconciliation rules: files keyed by
// path, a remove dropping only the add of its deletion vector.
func TestReconcile(t *testing.T) {
	for _, c := range []struct {
		name       string
		checkpoint []string
		commits    [][]string
		want       []string // path[#dv]
	}{
		{"adds accumulate", nil, [][]string{{addLine("a", "")}, {addLine("b", "")}}, []string{"a", "b"}},
		{"remove drops", nil, [][]string{{addLine("a", ""), addLine("b", "")}, {removeLine("a", "")}}, []string{"b"}},
		{"re-add after remove", nil, [][]string{{addLine("a", "")}, {removeLine("a", "")}, {addLine("a", "")}}, []string{"a"}},
		{"remove of absent file", nil, [][]string{{addLine("a", "")}, {removeLine("zz", "")}}, []string{"a"}},
		{"dv replaced: remove old, add new", nil, [][]string{{addLine("a", "")}, {removeLine("a", ""), addLine("a", "dv1")}}, []string{"a#idv1"}},
		{"dv replaced: add before remove", nil, [][]string{{addLine("a", "dv1")}, {addLine("a", "dv2"), removeLine("a", "dv1")}}, []string{"a#idv2"}},
		{"remove of another dv leaves the add", nil, [][]string{{addLine("a", "dv2")}, {removeLine("a", "dv1")}}, []string{"a#idv2"}},
		{"remove with its dv drops", nil, [][]string{{addLine("a", "dv2")}, {removeLine("a", "dv2")}}, nil},
		{"paths decoded", nil, [][]string{{addLine("x%20y", "")}, {removeLine("x y", "")}}, nil},
		{"checkpoint removes are tombstones", []string{addLine("a", ""), removeLine("a", ""), addLine("b", "")}, nil, []string{"a", "b"}},
		{"commit after checkpoint", []string{addLine("a", ""), addLine("b", "")}, [][]string{{removeLine("b", ""), addLine("c", "")}}, []string{"a", "c"}},
	} {
		var cp []action
		if c.checkpoint != nil {
			cp = mustParse(t, c.checkpoint...)
		}
		s := newSnapshot(cp)
		for v, commit := range c.commits {
			if err := s.apply(int64(v), mustParse(t, commit...)); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		var got []string
		for _, p := range s.sortedPaths() {
			k := p
			if dv := s.files[p].DeletionVector; dv != nil {
				k += "#" + dv.uniqueID()
			}
			got = append(got, k)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: files %v, want %v", c.name, got, c.want)
		}
	}
}

func TestReplayMetadataAndProtocolLatestWins(t *testing.T) {
	s := newSnapshot(mustParse(t, `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`, `{"metaData":{"id":"a","schemaString":"s1"}}`))
	if err := s.apply(1, mustParse(t, `{"metaData":{"id":"a","schemaString":"s2"}}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.apply(2, mustParse(t, `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":[]}}`)); err != nil {
		t.Fatal(err)
	}
	if s.metadata.SchemaString != "s2" || s.protocol.MinReaderVersion != 3 || s.version != 2 {
		t.Errorf("snapshot: %+v %+v v%d", s.metadata, s.protocol, s.version)
	}
	c := s.clone()
	if err := c.apply(3, mustParse(t, addLine("a", ""))); err != nil {
		t.Fatal(err)
	}
	if len(s.files) != 0 || len(c.files) != 1 {
		t.Errorf("clone shares files: %d %d", len(s.files), len(c.files))
	}
	if err := c.apply(4, mustParse(t, `{"sidecar":{"path":"x.parquet","sizeInBytes":1}}`)); err == nil {
		t.Error("a sidecar in a commit was accepted")
	}
}

func TestParseLogName(t *testing.T) {
	for _, c := range []struct {
		name        string
		ok          bool
		version     int64
		kind        logKind
		part, parts int
	}{
		{"00000000000000000000.json", true, 0, kindCommit, 0, 0},
		{"00000000000000000012.json", true, 12, kindCommit, 0, 0},
		{"00000000000000000010.checkpoint.parquet", true, 10, kindCheckpoint, 0, 0},
		{"00000000000000000010.checkpoint.0000000002.0000000003.parquet", true, 10, kindCheckpointPart, 2, 3},
		{"00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json", true, 10, kindCheckpointV2, 0, 0},
		{"00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.parquet", true, 10, kindCheckpointV2, 0, 0},
		{"00000000000000000010.checkpoint.0000000004.0000000003.parquet", false, 0, 0, 0, 0},
		{"00000000000000000010.checkpoint.80a083e8.json", false, 0, 0, 0, 0},
		{"00000000000000000003.00000000000000000005.compacted.json", false, 0, 0, 0, 0},
		{"00000000000000000003.crc", false, 0, 0, 0, 0},
		{"_last_checkpoint", false, 0, 0, 0, 0},
		{"0000000000000000000a.json", false, 0, 0, 0, 0},
		{".00000000000000000001.json.tmp", false, 0, 0, 0, 0},
		{"00000000000000000001.json.tmp", false, 0, 0, 0, 0},
	} {
		f, ok := parseLogName(c.name)
		if ok != c.ok || ok && (f.version != c.version || f.kind != c.kind || f.part != c.part || f.parts != c.parts) {
			t.Errorf("%s: %+v %v", c.name, f, ok)
		}
	}
}

func logFiles(t *testing.T, names ...string) []logFile {
	var out []logFile
	for _, n := range names {
		f, ok := parseLogName(n)
		if !ok {
			t.Fatalf("bad name %s", n)
		}
		f.info = storage.Info{Name: n}
		out = append(out, f)
	}
	return out
}

func commitName(v int64) string { return storageName(v, "json") }

func storageName(v int64, ext string) string {
	s := "00000000000000000000" + itoa(v)
	return s[len(s)-20:] + "." + ext
}

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

func segNames(s segment) (cp []string, commits []int64) {
	for _, f := range s.checkpoint {
		cp = append(cp, f.info.Name)
	}
	for _, f := range s.commits {
		commits = append(commits, f.version)
	}
	return
}

func TestSegment(t *testing.T) {
	var names []string
	for v := int64(0); v <= 12; v++ {
		names = append(names, commitName(v))
	}
	names = append(names,
		storageName(5, "checkpoint.parquet"),
		storageName(10, "checkpoint.0000000001.0000000002.parquet"), // complete two-part
		storageName(10, "checkpoint.0000000002.0000000002.parquet"),
		storageName(12, "checkpoint.0000000001.0000000003.parquet"), // incomplete: not used
	)
	ix := newLogIndex(logFiles(t, names...))
	if ix.latest() != 12 {
		t.Errorf("latest = %d", ix.latest())
	}
	for _, c := range []struct {
		version int64
		cp      []string
		commits []int64
	}{
		{12, []string{storageName(10, "checkpoint.0000000001.0000000002.parquet"), storageName(10, "checkpoint.0000000002.0000000002.parquet")}, []int64{11, 12}},
		{10, []string{storageName(10, "checkpoint.0000000001.0000000002.parquet"), storageName(10, "checkpoint.0000000002.0000000002.parquet")}, nil},
		{9, []string{storageName(5, "checkpoint.parquet")}, []int64{6, 7, 8, 9}},
		{4, nil, []int64{0, 1, 2, 3, 4}},
	} {
		s, err := ix.segment(c.version)
		if err != nil {
			t.Fatalf("v%d: %v", c.version, err)
		}
		cp, commits := segNames(s)
		if !slices.Equal(cp, c.cp) || !slices.Equal(commits, c.commits) {
			t.Errorf("v%d: checkpoint %v commits %v, want %v %v", c.version, cp, commits, c.cp, c.commits)
		}
	}

	// A cleaned-up log: commits before the checkpoint are gone.
	ix = newLogIndex(logFiles(t, storageName(5, "checkpoint.parquet"), commitName(5), commitName(6)))
	if _, err := ix.segment(6); err != nil {
		t.Errorf("v6: %v", err)
	}
	var se *source.Error
	if _, err := ix.segment(3); !errors.As(err, &se) || se.Kind != source.NotFound || !strings.Contains(se.Msg, "oldest version that can be read is 5") {
		t.Errorf("v3: %v", err)
	}
	// A gap after the checkpoint is a corrupt log.
	ix = newLogIndex(logFiles(t, commitName(0), commitName(1), commitName(3)))
	if _, err := ix.segment(3); !errors.As(err, &se) || se.Kind != source.Corrupt || !strings.Contains(se.Msg, "00000000000000000002.json") {
		t.Errorf("gap: %v", err)
	}
	// v2 checkpoints are preferred over classic ones of the same version.
	ix = newLogIndex(logFiles(t, commitName(0), storageName(0, "checkpoint.parquet"), storageName(0, "checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json")))
	s, _ := ix.segment(0)
	if len(s.checkpoint) != 1 || s.checkpoint[0].kind != kindCheckpointV2 {
		t.Errorf("preferred checkpoint: %+v", s.checkpoint)
	}
}

func TestVersionAsOf(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var commits []logFile
	// Versions 0..4 at +0s, +10s, +10s (clock did not move), +5s (went
	// back), +30s: read as 0, 10, 10.001, 10.002, 30.
	for v, sec := range []int{0, 10, 10, 5, 30} {
		commits = append(commits, logFile{version: int64(v + 3), kind: kindCommit,
			info: storage.Info{ModTime: base.Add(time.Duration(sec) * time.Second)}})
	}
	for _, c := range []struct {
		at   time.Duration
		want int64
	}{
		{0, 3}, {time.Second, 3}, {10 * time.Second, 4}, {10*time.Second + time.Millisecond, 5},
		{10*time.Second + 2*time.Millisecond, 6}, {29 * time.Second, 6}, {30 * time.Second, 7}, {time.Hour, 7},
	} {
		got, err := versionAsOf(commits, base.Add(c.at))
		if err != nil || got != c.want {
			t.Errorf("as of +%v: %d %v, want %d", c.at, got, err, c.want)
		}
	}
	var se *source.Error
	if _, err := versionAsOf(commits, base.Add(-time.Second)); !errors.As(err, &se) || se.Kind != source.NotFound {
		t.Errorf("before the first commit: %v", err)
	}
}
