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
	return sortedSpaceChecksum(keys, func(k string) string { return entryChecksums[k] })
}

// sortedSpaceChecksum sorts keys in place and hashes them with their entry
// checksums in one buffer: the checksum of every write, so no allocation
// per key.
func sortedSpaceChecksum(keys []string, checksum func(key string) string) string {
	sort.Strings(keys)
	n := 0
	for _, k := range keys {
		n += len(k) + len(checksum(k)) + 2
	}
	buf := make([]byte, 0, n)
	for _, k := range keys {
		buf = append(buf, k...)
		buf = append(buf, 0)
		buf = append(buf, checksum(k)...)
		buf = append(buf, '\n')
	}
	sum := sha256.Sum256(buf)
	return ChecksumPrefix + hex.EncodeToString(sum[:])
}

// NormalizeETag strips the quotes (and a weak W/ marker) a client may put
// around a checksum in If-Match or If-None-Match.
func NormalizeETag(v string) string {
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(v, "W/")
	return strings.ReplaceAll(v, `"`, "")
}
