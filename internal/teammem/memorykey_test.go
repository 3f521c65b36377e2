package teammem

import (
	"strings"
	"testing"
)

// TestMemoryKeyRefusesWithClientMessages: a path the memory-store dialect
// allows but a teammem key does not is refused with one of the path
// messages Claude Code's client maps to a per-file refusal (reference
// claude-code-memory-stores.md §8), never with a message that would count
// against the whole store.
func TestMemoryKeyRefusesWithClientMessages(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/" + strings.Repeat("a", 600) + ".md", MsgPathTooLong}, // > 512 (a key's limit), < 1024 (the dialect's)
		{`/notes\x.md`, MsgPathControl},
		{"/notes./x.md", MsgPathControl},
		{"/notes /x.md", MsgPathControl},
		{"/a/%2e%2e%2fb.md", MsgPathDotSegment},
		{"/a/\uff0e\uff0e/b.md", MsgPathDotSegment},
	} {
		_, err := MemoryKey(c.path)
		if err == nil || ErrorMessage(err) != c.want || ErrorCode(err) != EInvalid {
			t.Errorf("MemoryKey(%.40q) = %v, want %q", c.path, err, c.want)
		}
	}
	for _, ok := range []string{"/MEMORY.md", "/notes/a b.md", "/" + strings.Repeat("a", 500)} {
		if _, err := MemoryKey(ok); err != nil {
			t.Errorf("MemoryKey(%.40q) = %v", ok, err)
		}
	}
}
