package delta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
)

// action is one line of a commit, or one row of a checkpoint: at most one
// of its fields is set for a valid log (actions replay ignores, such as
// txn, cdc and domainMetadata, leave all of them nil).
type action struct {
	Add        *addAction      `json:"add"`
	Remove     *removeAction   `json:"remove"`
	MetaData   *metadataAction `json:"metaData"`
	Protocol   *protocolAction `json:"protocol"`
	CommitInfo *commitInfo     `json:"commitInfo"`
	Sidecar    *sidecarAction  `json:"sidecar"`
}

// addAction is a logical file of the table.
type addAction struct {
	// Path is a URI: relative to the table's directory (percent-encoded)
	// or absolute.
	Path string `json:"path"`
	// PartitionValues maps a partition column's physical name to its
	// serialized value; a nil value is null.
	PartitionValues map[string]*string `json:"partitionValues"`
	Size            int64              `json:"size"`
	// ModificationTime is milliseconds since the epoch.
	ModificationTime int64         `json:"modificationTime"`
	Stats            string        `json:"stats"`
	DeletionVector   *dvDescriptor `json:"deletionVector"`
}

// removeAction is a tombstone: the logical file (Path, DeletionVector) is
// no longer in the table.
type removeAction struct {
	Path           string        `json:"path"`
	DeletionVector *dvDescriptor `json:"deletionVector"`
}

// dvDescriptor locates a deletion vector (PROTOCOL.md, "Deletion Vector
// Descriptor Schema").
type dvDescriptor struct {
	StorageType    string `json:"storageType"`
	PathOrInlineDv string `json:"pathOrInlineDv"`
	// Offset is nil when absent (always for inline vectors; 0 otherwise).
	Offset      *int64 `json:"offset"`
	SizeInBytes int64  `json:"sizeInBytes"`
	Cardinality int64  `json:"cardinality"`
}

// uniqueID is the descriptor's derived uniqueId: with the path, the
// primary key of a logical file.
func (d *dvDescriptor) uniqueID() string {
	if d == nil {
		return ""
	}
	if d.Offset == nil {
		return d.StorageType + d.PathOrInlineDv
	}
	return d.StorageType + d.PathOrInlineDv + "@" + strconv.FormatInt(*d.Offset, 10)
}

type metadataAction struct {
	ID               string            `json:"id"`
	Format           formatSpec        `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration"`
}

type formatSpec struct {
	Provider string `json:"provider"`
}

type protocolAction struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures"`
	WriterFeatures   []string `json:"writerFeatures"`
}

type commitInfo struct {
	// InCommitTimestamp is set by writers of tables with in-commit
	// timestamps: milliseconds since the epoch.
	InCommitTimestamp *int64 `json:"inCommitTimestamp"`
}

// sidecarAction names a file of a v2 checkpoint's add and remove actions,
// in _delta_log/_sidecars/.
type sidecarAction struct {
	Path        string `json:"path"`
	SizeInBytes int64  `json:"sizeInBytes"`
}

// errAction marks an action that decodes but breaks the protocol.
var errAction = errors.New("invalid action")

// maxLineBytes bounds one action line; a longer line is not a commit a
// writer produced (the largest are metaData actions of very wide tables).
const maxLineBytes = 64 << 20

// parseCommit decodes the newline-delimited JSON actions of a commit (or a
// v2 checkpoint in JSON). Blank lines are skipped; anything else that is
// not a valid action fails, naming the line.
func parseCommit(data []byte) ([]action, error) {
	var out []action
	for line := 1; len(data) > 0; line++ {
		var text []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			text, data = data[:i], data[i+1:]
		} else {
			text, data = data, nil
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		if len(text) > maxLineBytes {
			return nil, fmt.Errorf("line %d: %d bytes, over the %d a line may hold: %w", line, len(text), maxLineBytes, errAction)
		}
		if text[0] != '{' {
			return nil, fmt.Errorf("line %d: not a JSON object: %w", line, errAction)
		}
		var a action
		if err := json.Unmarshal(text, &a); err != nil {
			return nil, fmt.Errorf("line %d: %v: %w", line, err, errAction)
		}
		if err := a.check(); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// check refuses what replay cannot work with.
func (a *action) check() error {
	if a.Add != nil {
		if a.Add.Path == "" {
			return fmt.Errorf("add without a path: %w", errAction)
		}
		if a.Add.Size < 0 {
			return fmt.Errorf("add %q: negative size %d: %w", a.Add.Path, a.Add.Size, errAction)
		}
		if err := a.Add.DeletionVector.check(); err != nil {
			return fmt.Errorf("add %q: %w", a.Add.Path, err)
		}
	}
	if a.Remove != nil {
		if a.Remove.Path == "" {
			return fmt.Errorf("remove without a path: %w", errAction)
		}
		if err := a.Remove.DeletionVector.check(); err != nil {
			return fmt.Errorf("remove %q: %w", a.Remove.Path, err)
		}
	}
	if a.Sidecar != nil && a.Sidecar.Path == "" {
		return fmt.Errorf("sidecar without a path: %w", errAction)
	}
	return nil
}

func (d *dvDescriptor) check() error {
	if d == nil {
		return nil
	}
	switch d.StorageType {
	case "u", "p", "i":
	default:
		return fmt.Errorf("deletion vector storage type %q (want u, p or i): %w", d.StorageType, errAction)
	}
	if d.PathOrInlineDv == "" {
		return fmt.Errorf("deletion vector without pathOrInlineDv: %w", errAction)
	}
	if d.SizeInBytes < 0 || d.SizeInBytes > maxDVBytes {
		return fmt.Errorf("deletion vector of %d bytes: %w", d.SizeInBytes, errAction)
	}
	if d.Offset != nil && *d.Offset < 0 {
		return fmt.Errorf("deletion vector at negative offset %d: %w", *d.Offset, errAction)
	}
	if d.Cardinality < 0 {
		return fmt.Errorf("deletion vector of cardinality %d: %w", d.Cardinality, errAction)
	}
	return nil
}

// filePath is the decoded form of an add or remove path: the key replay
// matches adds and removes by, so that two spellings of one URI meet.
func filePath(p string) string {
	if d, err := url.PathUnescape(p); err == nil {
		return d
	}
	return p
}
