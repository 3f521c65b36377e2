package teammem

import (
	"strings"
	"testing"
)

func TestValidateKeyRefusesInvisibleAndTrailing(t *testing.T) {
	for key, want := range map[string]string{
		"notes/\u202egnp.md":  "bidirectional control character",
		"a\u200fb.md":         "bidirectional control character",
		"a\u2066b.md":         "bidirectional control character",
		"zero\u200bwidth.md":  "zero-width character or byte order mark",
		"join\u200d.md":       "zero-width character or byte order mark",
		"\ufeffMEMORY.md":     "zero-width character or byte order mark",
		"word\u2060joiner.md": "zero-width character or byte order mark",
		"notes./a.md":         "a path segment ends with a dot or a space",
		"notes/a.md.":         "a path segment ends with a dot or a space",
		"notes /a.md":         "a path segment ends with a dot or a space",
		"a.md ":               "a path segment ends with a dot or a space",
	} {
		err := ValidateKey(key)
		if ErrorCode(err) != EInvalid || !strings.Contains(ErrorMessage(err), want) {
			t.Errorf("ValidateKey(%q) = %v, want %q", key, err, want)
		}
	}
	for _, ok := range []string{"notes/.hidden.md", "v1.2/notes.md", "a b/c d.md", "naïve/café.md"} {
		if err := ValidateKey(ok); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", ok, err)
		}
	}
}

func TestPlanRefusesKeysNoClientCanMirror(t *testing.T) {
	up := func(keys ...string) WriteRequest {
		var r WriteRequest
		for _, k := range keys {
			r.Upserts = append(r.Upserts, Upsert{Key: k, Content: "x"})
		}
		return r
	}
	for _, tc := range []struct {
		name  string
		heads map[string]Entry
		req   WriteRequest
		want  string // "" when the write is allowed
	}{
		{"file over a live directory", heads("f/g.md=1"), up("f"), `it is a directory of the live key under "f/"`},
		{"directory under a live file", heads("f=1"), up("f/g.md"), `its directory is the live key "f"`},
		{"both in one request", heads(), up("f", "f/g.md"), `its directory is the live key "f"`},
		{"case differs from a live key", heads("Build.md=1"), up("build.md"), `it differs only in case or normalization from "Build.md"`},
		{"case differs from a live directory", heads("Notes/a.md=1"), up("notes/b.md"), `its directory differs only in case or normalization from "Notes"`},
		{"normalization differs", heads("caf\u00e9.md=1"), up("cafe\u0301.md"), `differs only in case or normalization`},
		{"full case folding", heads("STRASSE.md=1"), up("straße.md"), `differs only in case`},
		{"in one request", heads(), up("A.md", "a.md"), `differs only in case`},
		{"a tombstone does not count", heads("-f=1"), up("f/g.md"), ""},
		{"deleted in the same write", heads("f=1"), WriteRequest{Upserts: []Upsert{{Key: "f/g.md", Content: "x"}}, Deletes: []Delete{{Key: "f"}}}, ""},
		{"same directory, same case", heads("Notes/a.md=1"), up("Notes/b.md"), ""},
		{"editing a key already in conflict", heads("A.md=1", "a.md=2"), up("a.md"), ""},
		{"sibling with a shared prefix", heads("f/g.md=1"), up("f.md", "fg/h.md"), ""},
	} {
		in := planIn(tc.heads)
		in.Limits.MaxEntries = 100
		_, _, err := Plan(tc.req, in)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Plan = %v, want it allowed", tc.name, err)
		case tc.want != "" && (ErrorCode(err) != EInvalid || !strings.Contains(ErrorMessage(err), tc.want)):
			t.Errorf("%s: Plan = %v, want invalid with %q", tc.name, err, tc.want)
		}
	}
}
