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
		switch {
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return "control character"
		case isBidiControl(r):
			return "bidirectional control character"
		case isInvisible(r):
			return "zero-width character or byte order mark"
		}
	}
	for _, seg := range strings.Split(key, "/") {
		switch {
		case seg == "":
			return "empty path segment"
		case seg == "." || seg == "..":
			return "'.' or '..' segment"
		case strings.HasSuffix(seg, ".") || strings.HasSuffix(seg, " "):
			// Windows drops them, so two keys would name one file there.
			return "a path segment ends with a dot or a space"
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

// isBidiControl reports whether r reorders text (the Unicode bidirectional
// formatting characters): in a file name it makes one key look like another.
func isBidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// isInvisible reports whether r renders as nothing: zero-width spaces and
// joiners, the word joiner and invisible operators, the Mongolian vowel
// separator and the byte order mark.
func isInvisible(r rune) bool {
	return (r >= 0x200b && r <= 0x200d) || (r >= 0x2060 && r <= 0x2064) || r == 0x180e || r == 0xfeff
}
