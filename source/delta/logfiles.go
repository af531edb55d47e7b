package delta

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

// logKind is what a _delta_log/ entry is.
type logKind int

const (
	kindCommit         logKind = iota + 1 // NNN.json
	kindCheckpoint                        // NNN.checkpoint.parquet
	kindCheckpointPart                    // NNN.checkpoint.PPP.QQQ.parquet
	kindCheckpointV2                      // NNN.checkpoint.UUID.json|parquet
)

// logFile is an entry of _delta_log/ that replay reads.
type logFile struct {
	info    storage.Info
	version int64
	kind    logKind
	// part and parts number a multi-part checkpoint's files (1-based).
	part, parts int
}

// versionDigits is the width of a version in log file names.
const versionDigits = 20

// parseLogName tells what the base name of a _delta_log/ entry is; ok is
// false for entries replay does not read (_last_checkpoint, .crc files,
// log compaction files, temporary files).
func parseLogName(base string) (f logFile, ok bool) {
	if len(base) < versionDigits+1 || base[versionDigits] != '.' {
		return f, false
	}
	v, ok := parseVersion(base[:versionDigits])
	if !ok {
		return f, false
	}
	f.version = v
	rest := base[versionDigits+1:]
	switch {
	case rest == "json":
		f.kind = kindCommit
	case rest == "checkpoint.parquet":
		f.kind = kindCheckpoint
	case strings.HasPrefix(rest, "checkpoint."):
		mid := strings.TrimPrefix(rest, "checkpoint.")
		if p, q, ok := parsePartName(mid); ok {
			f.kind, f.part, f.parts = kindCheckpointPart, p, q
			break
		}
		uuid, ext, found := strings.Cut(mid, ".")
		if !found || (ext != "json" && ext != "parquet") || !isUUID(uuid) {
			return f, false
		}
		f.kind = kindCheckpointV2
	default:
		return f, false
	}
	return f, true
}

// parsePartName parses "PPPPPPPPPP.QQQQQQQQQQ.parquet" (ten digits each).
func parsePartName(s string) (part, parts int, ok bool) {
	if len(s) != 10+1+10+len(".parquet") || s[10] != '.' || !strings.HasSuffix(s, ".parquet") {
		return 0, 0, false
	}
	p, err1 := strconv.Atoi(s[:10])
	q, err2 := strconv.Atoi(s[11:21])
	if err1 != nil || err2 != nil || p < 1 || q < 1 || p > q || !allDigits(s[:10]) || !allDigits(s[11:21]) {
		return 0, 0, false
	}
	return p, q, true
}

func parseVersion(s string) (int64, bool) {
	if !allDigits(s) {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// segment is what replay of one version reads: a checkpoint (none when
// cpVersion is -1) and the commits after it, in order.
type segment struct {
	version    int64
	cpVersion  int64
	checkpoint []logFile // one file, or a multi-part checkpoint's parts in order
	commits    []logFile // versions cpVersion+1 .. version
}

// logIndex is a _delta_log/ listing, sorted by version.
type logIndex struct {
	commits     []logFile // ascending, one per version
	checkpoints map[int64][][]logFile
}

// newLogIndex sorts a listing's entries by kind and version. Complete
// checkpoints only: a multi-part checkpoint missing a part (a writer that
// died half way) is not one.
func newLogIndex(files []logFile) logIndex {
	ix := logIndex{checkpoints: make(map[int64][][]logFile)}
	parts := make(map[[2]int64][]logFile) // (version, parts) -> parts seen
	for _, f := range files {
		switch f.kind {
		case kindCommit:
			ix.commits = append(ix.commits, f)
		case kindCheckpoint, kindCheckpointV2:
			ix.checkpoints[f.version] = append(ix.checkpoints[f.version], []logFile{f})
		case kindCheckpointPart:
			k := [2]int64{f.version, int64(f.parts)}
			parts[k] = append(parts[k], f)
		}
	}
	for k, fs := range parts {
		slices.SortFunc(fs, func(a, b logFile) int { return a.part - b.part })
		fs = slices.CompactFunc(fs, func(a, b logFile) bool { return a.part == b.part })
		if len(fs) == int(k[1]) {
			ix.checkpoints[k[0]] = append(ix.checkpoints[k[0]], fs)
		}
	}
	slices.SortFunc(ix.commits, func(a, b logFile) int { return cmpInt64(a.version, b.version) })
	ix.commits = slices.CompactFunc(ix.commits, func(a, b logFile) bool { return a.version == b.version })
	for v, cps := range ix.checkpoints {
		// Prefer a v2 (UUID-named) checkpoint, then a classic one, then
		// the multi-part checkpoint with the fewest parts: any complete
		// one holds the whole state.
		slices.SortStableFunc(cps, func(a, b []logFile) int {
			return cmpInt64(cpRank(a), cpRank(b))
		})
		ix.checkpoints[v] = cps
	}
	return ix
}

func cpRank(fs []logFile) int64 {
	switch fs[0].kind {
	case kindCheckpointV2:
		return 0
	case kindCheckpoint:
		return 1
	}
	return 1 + int64(len(fs))
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// latest is the newest version the listing holds (a commit or a
// checkpoint), -1 for an empty log.
func (ix logIndex) latest() int64 {
	v := int64(-1)
	if n := len(ix.commits); n > 0 {
		v = ix.commits[n-1].version
	}
	for cv := range ix.checkpoints {
		v = max(v, cv)
	}
	return v
}

// segment chooses what replay of version reads: the newest complete
// checkpoint at or below it, and the commits after it, which must all be
// there.
func (ix logIndex) segment(version int64) (segment, error) {
	seg := segment{version: version, cpVersion: -1}
	for cv, cps := range ix.checkpoints {
		if cv <= version && cv > seg.cpVersion {
			seg.cpVersion, seg.checkpoint = cv, cps[0]
		}
	}
	i, _ := slices.BinarySearchFunc(ix.commits, seg.cpVersion+1, func(f logFile, v int64) int { return cmpInt64(f.version, v) })
	next := seg.cpVersion + 1
	for ; i < len(ix.commits) && ix.commits[i].version <= version; i++ {
		if ix.commits[i].version != next {
			break
		}
		seg.commits = append(seg.commits, ix.commits[i])
		next++
	}
	if next <= version {
		if seg.cpVersion < 0 && (len(ix.commits) == 0 || ix.commits[0].version > 0) {
			return seg, &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf(
				"version %d is no longer in the log (its commits were cleaned up; the oldest version that can be read is %d)", version, ix.oldest())}
		}
		return seg, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf(
			"the log has no commit %0*d.json, which version %d needs (a checkpoint at or below it, then every commit after it)", versionDigits, next, version)}
	}
	return seg, nil
}

// oldest is the oldest version the listing can rebuild: the oldest
// checkpoint, or version 0 when the log starts at it.
func (ix logIndex) oldest() int64 {
	o := int64(-1)
	if len(ix.commits) > 0 && ix.commits[0].version == 0 {
		return 0
	}
	for cv := range ix.checkpoints {
		if o < 0 || cv < o {
			o = cv
		}
	}
	return o
}

// commitTimes returns each commit's timestamp (its modification time),
// made strictly increasing as Delta's readers do: a commit whose clock
// reads no later than its predecessor's counts as one millisecond after
// it.
func commitTimes(commits []logFile) []time.Time {
	out := make([]time.Time, len(commits))
	for i, c := range commits {
		t := c.info.ModTime.Truncate(time.Millisecond)
		if i > 0 && !t.After(out[i-1]) {
			t = out[i-1].Add(time.Millisecond)
		}
		out[i] = t
	}
	return out
}

// versionAsOf is the newest version whose commit timestamp is at or before
// asOf: the version a reader sees at that time.
func versionAsOf(commits []logFile, asOf time.Time) (int64, error) {
	if len(commits) == 0 {
		return 0, &source.Error{Kind: source.NotFound, Msg: "the log holds no commits to tell versions' times by"}
	}
	times := commitTimes(commits)
	i, _ := slices.BinarySearchFunc(times, asOf, func(t, x time.Time) int { return t.Compare(x) })
	// times[i] is the first at or after asOf.
	if i < len(times) && times[i].Equal(asOf) {
		return commits[i].version, nil
	}
	if i == 0 {
		return 0, &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf(
			"as_of %s is before the table's first commit in the log (version %d at %s)",
			asOf.UTC().Format(time.RFC3339Nano), commits[0].version, times[0].UTC().Format(time.RFC3339Nano))}
	}
	return commits[i-1].version, nil
}
