package teammem

import (
	"strings"
	"testing"
	"time"
)

var now0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// heads builds entry heads: "k=content" live, "-k=content" a tombstone of
// content deleted at now0.
func heads(specs ...string) map[string]Entry {
	out := map[string]Entry{}
	for _, s := range specs {
		deleted := strings.HasPrefix(s, "-")
		k, v, _ := strings.Cut(strings.TrimPrefix(s, "-"), "=")
		out[k] = Entry{Key: k, Checksum: EntryChecksum(v), Size: len(v), Deleted: deleted, UpdatedAt: now0}
	}
	return out
}

// tombstoneAt is the heads of one key deleted at version v.
func tombstoneAt(key, content string, v int64) map[string]Entry {
	h := heads("-" + key + "=" + content)
	e := h[key]
	e.Version = v
	h[key] = e
	return h
}

func planIn(h map[string]Entry) PlanInput {
	sums := map[string]string{}
	for k, e := range h {
		if !e.Deleted {
			sums[k] = e.Checksum
		}
	}
	return PlanInput{
		Space:  Space{Version: 3, Checksum: SpaceChecksum(sums), EntryCount: len(sums)},
		Heads:  h,
		Limits: Limits{MaxEntries: 3, MaxEntryBytes: 100, SecretPolicy: SecretPolicySkip},
		Scan: func(key, content string) []SkippedSecret {
			if strings.Contains(content, "SECRET") {
				return []SkippedSecret{{Path: key, RuleID: "test-rule", Label: "Test Rule", Line: 1}}
			}
			return nil
		},
		Current:            func(key string) (string, error) { return "current of " + key, nil },
		TombstoneRetention: 24 * time.Hour,
		Now:                now0.Add(time.Hour),
	}
}

func ptr(s string) *string { return &s }

func TestPlan(t *testing.T) {
	tests := []struct {
		name      string
		heads     map[string]Entry
		req       WriteRequest
		mutate    func(*PlanInput)
		wantErr   string
		wantKeys  string // written keys, then "|", then deleted keys
		skipped   int
		tombstone int
	}{
		{name: "upsert new and changed, keep same", heads: heads("a=1", "b=2"),
			req:      WriteRequest{Upserts: []Upsert{{Key: "a", Content: "1"}, {Key: "b", Content: "changed"}, {Key: "c", Content: "3"}}},
			wantKeys: "b,c|"},
		{name: "noop", heads: heads("a=1"), req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "1"}}}, wantKeys: "|"},
		{name: "if-match ok", heads: heads("a=1"), req: WriteRequest{IfMatch: `"` + SpaceChecksum(map[string]string{"a": EntryChecksum("1")}) + `"`,
			Upserts: []Upsert{{Key: "a", Content: "2"}}}, wantKeys: "a|"},
		{name: "if-match stale", heads: heads("a=1"), req: WriteRequest{IfMatch: "sha256:old", Upserts: []Upsert{{Key: "a", Content: "2"}}},
			wantErr: EPreconditionFailed},
		{name: "too many entries", heads: heads("a=1", "b=2"), req: WriteRequest{Upserts: []Upsert{{Key: "c", Content: "3"}, {Key: "d", Content: "4"}}},
			wantErr: ETooLarge},
		{name: "at the cap is fine", heads: heads("a=1", "b=2"), req: WriteRequest{Upserts: []Upsert{{Key: "c", Content: "3"}}}, wantKeys: "c|"},
		{name: "delete makes room", heads: heads("a=1", "b=2", "c=3"),
			req: WriteRequest{Upserts: []Upsert{{Key: "d", Content: "4"}}, Deletes: []Delete{{Key: "a"}}}, wantKeys: "d|a"},
		{name: "over-cap space may still shrink and edit", heads: heads("a=1", "b=2", "c=3", "d=4"),
			req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "x"}}}, wantKeys: "a|"},
		{name: "secret skipped", heads: heads(), req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "SECRET"}, {Key: "b", Content: "ok"}}},
			wantKeys: "b|", skipped: 1},
		{name: "secret rejected", heads: heads(), req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "SECRET"}, {Key: "b", Content: "ok"}}},
			mutate: func(in *PlanInput) { in.Limits.SecretPolicy = SecretPolicyReject }, wantErr: ESecretDetected},
		{name: "unchanged secret content is not rescanned", heads: heads("a=SECRET"), req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "SECRET"}}},
			wantKeys: "|"},
		{name: "stale re-upload of deleted content", heads: heads("-a=old"), req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "old"}}},
			wantKeys: "|", tombstone: 1},
		{name: "re-creation naming its deletion", heads: tombstoneAt("a", "old", 7),
			req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "old", Base: ptr(""), Recreates: 7}}}, wantKeys: "a|"},
		{name: "re-creation naming another deletion is a stale copy", heads: tombstoneAt("a", "old", 7),
			req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "old", Base: ptr(""), Recreates: 5}}}, wantKeys: "|", tombstone: 1},
		{name: "new content recreates", heads: heads("-a=old"), req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "new"}}}, wantKeys: "a|"},
		{name: "expired tombstone does not block", heads: heads("-a=old"), req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "old"}}},
			mutate: func(in *PlanInput) { in.Now = now0.Add(48 * time.Hour) }, wantKeys: "a|"},
		{name: "restore bypasses tombstone", heads: heads("-a=old"), req: WriteRequest{Restore: true, Upserts: []Upsert{{Key: "a", Content: "old"}}},
			wantKeys: "a|"},
		{name: "base matches", heads: heads("a=1"), req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "2", Base: ptr(EntryChecksum("1"))}}}, wantKeys: "a|"},
		{name: "base stale", heads: heads("a=1"), req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "2", Base: ptr(EntryChecksum("0"))}}},
			wantErr: EConflict},
		{name: "create-only on existing", heads: heads("a=1"), req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "2", Base: ptr("")}}},
			wantErr: EConflict},
		{name: "create-only over tombstone", heads: heads("-a=1"), req: WriteRequest{Upserts: []Upsert{{Key: "a", Content: "2", Base: ptr("")}}},
			wantKeys: "a|"},
		{name: "delete with stale base", heads: heads("a=1"), req: WriteRequest{Deletes: []Delete{{Key: "a", Base: ptr(EntryChecksum("0"))}}},
			wantErr: EConflict},
		{name: "delete missing is a no-op", heads: heads("-a=1"), req: WriteRequest{Deletes: []Delete{{Key: "a"}, {Key: "zz"}}}, wantKeys: "|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := planIn(tt.heads)
			if tt.mutate != nil {
				tt.mutate(&in)
			}
			changes, res, err := Plan(tt.req, in)
			if tt.wantErr != "" {
				if ErrorCode(err) != tt.wantErr || changes != nil {
					t.Fatalf("Plan err = %v, changes %v; want %s and none", err, changes, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(res.Written, ",") + "|" + strings.Join(res.Deleted, ","); got != tt.wantKeys {
				t.Errorf("written|deleted = %q, want %q", got, tt.wantKeys)
			}
			if len(changes) != len(res.Written)+len(res.Deleted) {
				t.Errorf("changes %v do not match the report", changes)
			}
			if len(res.SkippedSecrets) != tt.skipped || len(res.SkippedTombstoned) != tt.tombstone {
				t.Errorf("skipped secrets %v tombstoned %v", res.SkippedSecrets, res.SkippedTombstoned)
			}
		})
	}
}

func TestPlanErrorDetails(t *testing.T) {
	in := planIn(heads("a=1", "b=2"))
	_, _, err := Plan(WriteRequest{Upserts: []Upsert{{Key: "c", Content: "3"}, {Key: "d", Content: "4"}}}, in)
	d := ErrorDetails(err)
	if ErrorReason(err) != ReasonTooManyEntries || d["max_entries"] != 3 || d["received_entries"] != 4 {
		t.Fatalf("413 details = %v", d)
	}
	_, _, err = Plan(WriteRequest{IfMatch: "x", Upserts: []Upsert{{Key: "a", Content: "2"}}}, in)
	if d := ErrorDetails(err); d["checksum"] != in.Space.Checksum || d["version"] != int64(3) {
		t.Fatalf("412 details = %v", d)
	}
	_, _, err = Plan(WriteRequest{Upserts: []Upsert{{Key: "a", Content: "2", Base: ptr("sha256:x")}}}, in)
	c := ErrorDetails(err)["conflicts"].([]Conflict)
	if len(c) != 1 || c[0].Content != "current of a" || c[0].Checksum != EntryChecksum("1") {
		t.Fatalf("409 conflicts = %+v", c)
	}
}

func TestValidateWrite(t *testing.T) {
	l := Limits{MaxEntries: 10, MaxEntryBytes: 5}
	if err := ValidateWrite(WriteRequest{Upserts: []Upsert{{Key: "a", Content: "123456"}}}, l); ErrorCode(err) != ETooLarge ||
		ErrorDetails(err)["key"] != "a" || ErrorReason(err) != ReasonEntryTooLarge {
		t.Fatalf("oversized entry: %v", err)
	}
	if err := ValidateWrite(WriteRequest{Upserts: []Upsert{{Key: "a"}}, Deletes: []Delete{{Key: "a"}}}, l); ErrorCode(err) != EInvalid {
		t.Fatalf("duplicate key: %v", err)
	}
	if err := ValidateWrite(WriteRequest{Upserts: []Upsert{{Key: "a", Content: "x", Recreates: -1}}}, l); ErrorCode(err) != EInvalid {
		t.Fatalf("negative recreates: %v", err)
	}
	if err := ValidateWrite(WriteRequest{Upserts: []Upsert{{Key: "../a"}}}, l); ErrorCode(err) != EInvalid {
		t.Fatalf("bad key: %v", err)
	}
	if err := ValidateWrite(WriteRequest{Upserts: []Upsert{{Key: "a", Content: "\xff"}}}, l); ErrorCode(err) != EInvalid {
		t.Fatalf("bad utf-8: %v", err)
	}
}

func TestSpaceChecksum(t *testing.T) {
	if EmptySpaceChecksum != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("empty checksum = %s", EmptySpaceChecksum)
	}
	// key + NUL + entry checksum + newline, keys in byte order.
	a, b := EntryChecksum("A"), EntryChecksum("B")
	want := EntryChecksum("B.md\x00" + b + "\n" + "a.md\x00" + a + "\n")
	if got := SpaceChecksum(map[string]string{"a.md": a, "B.md": b}); got != want {
		t.Fatalf("SpaceChecksum = %s, want %s", got, want)
	}
	if NormalizeETag(` W/"sha256:ab" `) != "sha256:ab" {
		t.Fatal("NormalizeETag")
	}
}

func TestApplyChangesSummarize(t *testing.T) {
	h := heads("a=1", "-b=2")
	out := ApplyChanges(h, []EntryChange{{Key: "a", Op: OpDelete}, {Key: "b", Op: OpRestore, Content: "22"}, {Key: "c", Op: OpWrite, Content: "333"}}, 4, Actor{UserID: 9}, now0)
	if !out["a"].Deleted || out["a"].Checksum != EntryChecksum("1") || out["b"].Deleted || out["c"].Version != 4 || out["c"].AuthorID != 9 {
		t.Fatalf("ApplyChanges = %+v", out)
	}
	sum, n, bytes := Summarize(out)
	if n != 2 || bytes != 5 || sum != SpaceChecksum(map[string]string{"b": EntryChecksum("22"), "c": EntryChecksum("333")}) {
		t.Fatalf("Summarize = %s %d %d", sum, n, bytes)
	}
	if len(h) != 2 || h["a"].Deleted {
		t.Fatal("ApplyChanges modified its input")
	}
}
