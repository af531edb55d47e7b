package delta

import (
	"fmt"
	"maps"
	"slices"
)

// snapshot is a table's state at one version: what replaying its log up to
// that version leaves. It is not changed once built (the cache shares it).
type snapshot struct {
	version  int64
	protocol *protocolAction
	metadata *metadataAction
	// files are the table's logical files by decoded path: an add
	// replaces any earlier add of its path, whatever its deletion vector
	// (PROTOCOL.md, "Action Reconciliation").
	files map[string]*addAction
}

// newSnapshot starts replay from a checkpoint's actions (none for a log
// replayed from version 0). A checkpoint's removes are tombstones for
// VACUUM: its adds are already reconciled, so the removes are not applied.
func newSnapshot(checkpoint []action) *snapshot {
	s := &snapshot{version: -1, files: make(map[string]*addAction)}
	for i := range checkpoint {
		a := &checkpoint[i]
		switch {
		case a.Add != nil:
			s.files[filePath(a.Add.Path)] = a.Add
		case a.MetaData != nil:
			s.metadata = a.MetaData
		case a.Protocol != nil:
			s.protocol = a.Protocol
		}
	}
	return s
}

// clone returns a snapshot that apply may change without changing s.
func (s *snapshot) clone() *snapshot {
	c := *s
	c.files = maps.Clone(s.files)
	return &c
}

// apply replays one commit's actions onto s, which becomes the snapshot of
// version. An add replaces the add of its path; a remove drops the add of
// its path only when it names the same deletion vector (a remove of an
// older logical file of the path, as a commit that replaces a file's
// deletion vector writes, leaves the newer add alone). Sidecar actions do
// not belong in commits and are refused.
func (s *snapshot) apply(version int64, actions []action) error {
	for i := range actions {
		a := &actions[i]
		switch {
		case a.Add != nil:
			s.files[filePath(a.Add.Path)] = a.Add
		case a.Remove != nil:
			key := filePath(a.Remove.Path)
			if cur, ok := s.files[key]; ok && cur.DeletionVector.uniqueID() == a.Remove.DeletionVector.uniqueID() {
				delete(s.files, key)
			}
		case a.MetaData != nil:
			s.metadata = a.MetaData
		case a.Protocol != nil:
			s.protocol = a.Protocol
		case a.Sidecar != nil:
			return fmt.Errorf("a sidecar action in a commit: %w", errAction)
		}
	}
	s.version = version
	return nil
}

// sortedPaths returns the keys of s.files in order: the stable order of
// the listing.
func (s *snapshot) sortedPaths() []string {
	return slices.Sorted(maps.Keys(s.files))
}
