package memdir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// MaxSanitizedLength is the longest project key SanitizePath returns without
// a hash suffix (Claude Code's MAX_SANITIZED_LENGTH).
const MaxSanitizedLength = 200

// ConfigHome returns Claude Code's config home: $CLAUDE_CONFIG_DIR whenever
// the variable is defined, else home/.claude, NFC-normalised.
//
// Claude Code uses a defined but empty CLAUDE_CONFIG_DIR as is. A getenv
// function cannot tell "defined and empty" from "undefined", so that case is
// only honoured when getenv is nil, which reads the process environment with
// os.LookupEnv; with a non-nil getenv an empty value means undefined.
func ConfigHome(getenv func(string) string, home string) string {
	if v, ok := lookupEnv(getenv, "CLAUDE_CONFIG_DIR"); ok {
		return norm.NFC.String(v)
	}
	return norm.NFC.String(filepath.Join(home, ".claude"))
}

// lookupEnv reads an environment variable through getenv, or through
// os.LookupEnv when getenv is nil.
func lookupEnv(getenv func(string) string, name string) (string, bool) {
	if getenv == nil {
		return os.LookupEnv(name)
	}
	v := getenv(name)
	return v, v != ""
}

// SanitizePath turns a path into the name of its directory under
// <config home>/projects, exactly as Claude Code does: every UTF-16 code unit
// that is not an ASCII letter or digit becomes '-' (so a character outside
// the Basic Multilingual Plane, such as an emoji, becomes two hyphens). A
// result longer than MaxSanitizedLength is cut to that length and followed by
// "-" and a hash of the original name.
//
// The hash is the one Claude Code computes under Node: Java's String.hashCode
// over the UTF-16 code units (h = int32(h*31 + unit), starting at 0), its
// absolute value, in lowercase base 36. The shipped CLI runs under Bun and
// hashes with Wyhash instead, so a long-path directory it created has a
// different suffix; ProjectDir finds such directories by prefix. The Node
// variant is used for directories teammem creates.
func SanitizePath(name string) string {
	units := utf16.Encode([]rune(name))
	b := make([]byte, len(units))
	for i, u := range units {
		if isASCIIAlnum(u) {
			b[i] = byte(u)
		} else {
			b[i] = '-'
		}
	}
	if len(b) <= MaxSanitizedLength {
		return string(b)
	}
	return string(b[:MaxSanitizedLength]) + "-" + strconv.FormatInt(javaHashAbs(units), 36)
}

func isASCIIAlnum(u uint16) bool {
	return u >= '0' && u <= '9' || u >= 'A' && u <= 'Z' || u >= 'a' && u <= 'z'
}

// javaHashAbs returns |String.hashCode()| of the code units. The absolute
// value is taken in 64 bits, as JavaScript's Math.abs does on a double, so
// math.MinInt32 becomes 2147483648 rather than overflowing.
func javaHashAbs(units []uint16) int64 {
	var h int32
	for _, u := range units {
		h = h*31 + int32(u)
	}
	v := int64(h)
	if v < 0 {
		v = -v
	}
	return v
}

// ProjectDir returns <configHome>/projects/<key>, the directory Claude Code
// keeps a project's transcripts and memory in. key is either a path (the
// canonical git root or the project root), which is passed through
// SanitizePath, or an already sanitized key (only ASCII letters, digits and
// '-'), used as is.
//
// When the exact directory does not exist and the sanitized key is longer
// than MaxSanitizedLength (so it ends with a hash that depends on the runtime
// that created it), the first directory in projects/ (by name) whose name
// starts with the key's first 200 characters followed by "-" is returned
// instead. Without a match the exact path is returned, for creation.
func ProjectDir(configHome, key string) string {
	if !isSanitized(key) {
		key = SanitizePath(key)
	}
	projects := filepath.Join(configHome, "projects")
	exact := filepath.Join(projects, key)
	if len(key) <= MaxSanitizedLength {
		return exact
	}
	if fi, err := os.Stat(exact); err == nil && fi.IsDir() {
		return exact
	}
	prefix := key[:MaxSanitizedLength] + "-"
	entries, err := os.ReadDir(projects) // sorted by name
	if err != nil {
		return exact
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		// A symlinked project dir counts when it points at a directory,
		// as the exact-path Stat above would accept it too.
		if fi, err := os.Stat(filepath.Join(projects, e.Name())); err == nil && fi.IsDir() {
			return filepath.Join(projects, e.Name())
		}
	}
	return exact
}

// isSanitized reports whether key already has SanitizePath's output alphabet.
// Absolute paths always hold a separator, so they never qualify.
func isSanitized(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c != '-' && !isASCIIAlnum(uint16(c)) {
			return false
		}
	}
	return true
}
