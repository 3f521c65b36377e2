package teammem

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidateKeyRejects(t *testing.T) {
	cases := map[string]string{
		"":                              "empty",
		"a\x00b.md":                     "null byte",
		"..%2Fetc%2Fpasswd":             "URL-encoded traversal",
		"%2e%2e/x.md":                   "URL-encoded traversal",
		"notes/a%20b.md":                "URL-encoded traversal", // decodes differently and contains '/'
		"a%2Fb.md":                      "URL-encoded traversal",
		"．．／etc":                        "Unicode-normalized traversal", // fullwidth dots and slash
		"dir/ﬁle.md":                    "Unicode-normalized traversal", // ligature changes under NFKC, key has '/'
		"a\\b.md":                       "backslash",
		"..\\x":                         "backslash",
		"/etc/passwd":                   "absolute path",
		"..":                            "'.' or '..' segment",
		"../x.md":                       "'.' or '..' segment",
		"a/../../x.md":                  "'.' or '..' segment",
		"a/..":                          "'.' or '..' segment",
		".":                             "'.' or '..' segment",
		"./a.md":                        "'.' or '..' segment",
		"a//b.md":                       "empty path segment",
		"a/":                            "empty path segment",
		"tab\there.md":                  "control character",
		"new\nline.md":                  "control character",
		"del\x7f.md":                    "control character",
		"c1\u0085.md":                   "control character",
		"bad\xffutf8.md":                "not valid UTF-8",
		strings.Repeat("a", 513):        "longer than 512 bytes",
		"x/" + strings.Repeat("b", 511): "longer than 512 bytes",
	}
	for key, want := range cases {
		err := ValidateKey(key)
		if err == nil {
			t.Errorf("ValidateKey(%q) accepted", key)
			continue
		}
		if ErrorCode(err) != EInvalid || ErrorDetails(err)["reason"] != want {
			t.Errorf("ValidateKey(%q) = %v (reason %v), want %q", key, err, ErrorDetails(err)["reason"], want)
		}
	}
}

func TestValidateKeyAccepts(t *testing.T) {
	for _, key := range []string{
		"MEMORY.md", "testing/flaky.md", "a/b/c/d.md", "notes.txt", "über.md", "日本語/メモ.md",
		"a%20b.md", // decodes differently but holds neither '..' nor '/'
		"100%.md",  // malformed escape: the client keeps the raw key
		"file..md", "a..b/c.md", ".hidden.md", "emoji-😀.md", strings.Repeat("a", 512),
	} {
		if err := ValidateKey(key); err != nil {
			t.Errorf("ValidateKey(%q) = %v", key, err)
		}
	}
}

// FuzzValidateKey checks that every accepted key stays inside the directory
// it is joined to and is something a file system can name.
func FuzzValidateKey(f *testing.F) {
	for _, s := range []string{"MEMORY.md", "a/b.md", "../x", "%2e%2e/x", "．．／", "a\\b", "/abs", "a//b", "ok%20.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if ValidateKey(key) != nil {
			return
		}
		joined := path.Join("/root/team", key)
		if !strings.HasPrefix(joined, "/root/team/") || joined == "/root/team/" {
			t.Fatalf("accepted key %q escapes: %s", key, joined)
		}
		if !utf8.ValidString(key) || strings.ContainsAny(key, "\x00\\") || len(key) > MaxKeyBytes {
			t.Fatalf("accepted bad key %q", key)
		}
		if path.Clean(key) != key {
			t.Fatalf("accepted non-canonical key %q", key)
		}
	})
}
