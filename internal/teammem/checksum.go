package teammem

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
)

// ChecksumPrefix starts every checksum teammem produces.
const ChecksumPrefix = "sha256:"

// EntryChecksum returns "sha256:" + the hex SHA-256 of the content's bytes,
// exactly as the Claude Code client computes it.
func EntryChecksum(content string) string {
	h := sha256.Sum256([]byte(content))
	return ChecksumPrefix + hex.EncodeToString(h[:])
}

// EmptySpaceChecksum is the checksum of a space without live entries: the
// SHA-256 of the empty string.
var EmptySpaceChecksum = SpaceChecksum(nil)

// SpaceChecksum returns the checksum of a space given its live entries' keys
// and checksums: SHA-256 over, for each key in byte order,
// key + "\x00" + entryChecksum + "\n". Clients recompute it to verify a mirror.
func SpaceChecksum(entryChecksums map[string]string) string {
	keys := make([]string, 0, len(entryChecksums))
	for k := range entryChecksums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(entryChecksums[k]))
		h.Write([]byte{'\n'})
	}
	return ChecksumPrefix + hex.EncodeToString(h.Sum(nil))
}

// NormalizeETag strips the quotes (and a weak W/ marker) a client may put
// around a checksum in If-Match or If-None-Match.
func NormalizeETag(v string) string {
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(v, "W/")
	return strings.ReplaceAll(v, `"`, "")
}
