package teammem

import (
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxKeyBytes bounds an entry key.
const MaxKeyBytes = 512

// ValidateKey checks an entry key (a path relative to the space root) with
// every string rule the Claude Code client applies before it writes a pulled
// key to disk (reference §3.9), plus the server's own: no empty, "." or ".."
// segments, no control characters, valid UTF-8, at most MaxKeyBytes. A key
// that passes can be joined to a directory without escaping it lexically.
func ValidateKey(key string) error {
	reason := keyProblem(key)
	if reason == "" {
		return nil
	}
	return Errorf(EInvalid, "invalid key %q: %s", truncateForMessage(key), reason).
		WithDetails(map[string]any{"key": truncateForMessage(key), "reason": reason})
}

func keyProblem(key string) string {
	switch {
	case key == "":
		return "empty"
	case len(key) > MaxKeyBytes:
		return "longer than 512 bytes"
	case !utf8.ValidString(key):
		return "not valid UTF-8"
	case strings.ContainsRune(key, 0):
		return "null byte"
	}
	// URL-encoded traversal: the client rejects a key that decodes to
	// something different containing ".." or "/".
	if d, err := url.PathUnescape(key); err == nil && utf8.ValidString(d) && d != key &&
		(strings.Contains(d, "..") || strings.Contains(d, "/")) {
		return "URL-encoded traversal"
	}
	// Unicode-normalized traversal, e.g. fullwidth dots and slashes.
	if n := norm.NFKC.String(key); n != key && (strings.Contains(n, "..") || strings.ContainsAny(n, "/\\\x00")) {
		return "Unicode-normalized traversal"
	}
	switch {
	case strings.Contains(key, `\`):
		return "backslash"
	case strings.HasPrefix(key, "/"):
		return "absolute path"
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return "control character"
		}
	}
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "":
			return "empty path segment"
		case ".", "..":
			return "'.' or '..' segment"
		}
	}
	// Lexical containment, as the client checks it: the cleaned key must stay
	// below the root and name something other than the root.
	if c := path.Clean(key); c == "." || strings.HasPrefix(c, "../") || c == ".." {
		return "escapes the memory directory"
	}
	return ""
}

func truncateForMessage(s string) string {
	if len(s) <= 100 {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	cut := 100
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.ToValidUTF8(s[:cut], "\uFFFD") + "…"
}
