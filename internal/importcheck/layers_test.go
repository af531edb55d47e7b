package importcheck

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/scand/scand/"

// rank orders the rooms a request flows through, the Flight edge on top:
// server -> planner -> source -> scanner -> iosched -> storage. A room may
// import its own packages and those of lower rank, never upward. The
// shared rooms (proto, wire, internal) rank below them all; the clients
// stand apart and take only the shared ones; cmd and the benchmarks wire
// everything and are not checked.
var rank = map[string]int{
	"proto": 0, "wire": 1, "internal": 1,
	"storage": 2, "iosched": 3, "scanner": 4, "source": 5, "planner": 6,
	"sqlfront": 7, "server": 8,
	"client": 2,
}

// room is the first folder of a path inside the module.
func room(rel string) string {
	r, _, _ := strings.Cut(rel, "/")
	return r
}

func TestRequestsFlowOneWay(t *testing.T) {
	root := filepath.Join("..", "..")
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		from, ok := rank[room(rel)]
		if !ok {
			continue // cmd, bench, e2e: the wiring and the measurements
		}
		checked++
		fromRoom := room(rel)
		if fromRoom == "client" && strings.HasPrefix(rel, "client/python") {
			continue
		}
		for name, paths := range Imports(t, filepath.Join(dir, "*.go")) {
			for _, path := range paths {
				target, ok := strings.CutPrefix(path, module)
				if !ok {
					continue
				}
				to, known := rank[room(target)]
				switch {
				case room(target) == fromRoom:
				case !known:
					t.Errorf("%s imports %s: only cmd/scand and the benchmarks wire %s in", name, path, room(target))
				case fromRoom == "client" && to > rank["internal"]:
					t.Errorf("%s imports %s: the clients speak the wire contract only", name, path)
				case to >= from:
					t.Errorf("%s imports %s: requests flow server -> planner -> source -> scanner -> iosched -> storage, never back", name, path)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d package folders: the walk lost the tree", checked)
	}
}

func TestPrefixed(t *testing.T) {
	for _, tt := range []struct {
		path, prefix string
		want         bool
	}{
		{"google.golang.org/grpc", "google.golang.org/grpc", true},
		{"google.golang.org/grpc/codes", "google.golang.org/grpc", true},
		{"google.golang.org/grpcx", "google.golang.org/grpc", false},
		{"github.com/scand/scand/server", "github.com/scand/scand/server/", true},
	} {
		if got := Prefixed(tt.path, tt.prefix); got != tt.want {
			t.Errorf("Prefixed(%q, %q) = %v", tt.path, tt.prefix, got)
		}
	}
}
