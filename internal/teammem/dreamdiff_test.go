package teammem

import (
	"reflect"
	"testing"
)

func entries(kv ...string) []Entry {
	var out []Entry
	for i := 0; i < len(kv); i += 2 {
		out = append(out, Entry{Key: kv[i], Content: kv[i+1], Checksum: EntryChecksum(kv[i+1]), MemoryID: "mem_" + kv[i]})
	}
	return out
}

// kinds is a diff as key → kind (+ merged_from).
func kinds(changes []DreamChange) map[string]string {
	m := map[string]string{}
	for _, c := range changes {
		s := string(c.Kind)
		for _, f := range c.MergedFrom {
			s += " " + f
		}
		m[c.Key] = s
	}
	return m
}

func TestDiffDream(t *testing.T) {
	dupA := "---\nname: Deploy steps\ndescription: how we deploy the api\n---\nrun make release first\nthen tag the commit with vX.Y\n"
	dupB := "---\nname: Release tagging\ndescription: tags for releases\n---\nthen tag the commit with vX.Y\npush the tag to origin\n"
	merged := "---\nname: Deploy steps\ndescription: how we deploy the api\n---\nrun make release first\nthen tag the commit with vX.Y\npush the tag to origin\n"
	tests := []struct {
		name    string
		in, out []Entry
		want    map[string]string
	}{
		{"unchanged left out", entries("a.md", "x"), entries("a.md", "x"), map[string]string{}},
		{"added", nil, entries("a.md", "x"), map[string]string{"a.md": "added"}},
		{"rewritten", entries("a.md", "x"), entries("a.md", "y"), map[string]string{"a.md": "rewritten"}},
		{"deleted, absorbed by nothing", entries("a.md", "some fact here", "b.md", "other"), entries("b.md", "other"),
			map[string]string{"a.md": "deleted"}},
		{"two duplicates merged into one", entries("deploy.md", dupA, "tagging.md", dupB), entries("deploy.md", merged),
			map[string]string{"deploy.md": "merged tagging.md", "tagging.md": "deleted"}},
		{"merged into a new memory, by body lines", entries("a.md", dupA, "b.md", dupB), entries("release.md", "run make release first\nthen tag the commit with vX.Y\npush the tag to origin\n"),
			map[string]string{"a.md": "deleted", "b.md": "deleted", "release.md": "merged a.md b.md"}},
		{"merged by name alone", entries("old.md", "---\nname: Flaky integration tests\n---\nrerun them"),
			entries("tests.md", "See also: Flaky integration tests (retry twice)."),
			map[string]string{"old.md": "deleted", "tests.md": "merged old.md"}},
		{"the index never absorbs", entries("MEMORY.md", "- a", "a.md", dupA), entries("MEMORY.md", "- Deploy steps: how we deploy the api"),
			map[string]string{"MEMORY.md": "rewritten", "a.md": "deleted"}},
		{"half the lines are not enough when fewer", entries("a.md", "line number one here\nline number two here\nline number three here"),
			entries("b.md", "line number one here"), map[string]string{"a.md": "deleted", "b.md": "added"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := kinds(DiffDream(tc.in, tc.out))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("diff = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDiffDreamFields(t *testing.T) {
	ch := DiffDream(entries("a.md", "old", "gone.md", "bye"), entries("a.md", "new", "n.md", "hi"))
	want := []DreamChange{
		{Key: "a.md", Kind: DreamChangeRewritten, MemoryID: "mem_a.md", Before: "old", HadBefore: true, After: "new", HasAfter: true},
		{Key: "gone.md", Kind: DreamChangeDeleted, MemoryID: "mem_gone.md", Before: "bye", HadBefore: true},
		{Key: "n.md", Kind: DreamChangeAdded, After: "hi", HasAfter: true},
	}
	if !reflect.DeepEqual(ch, want) {
		t.Fatalf("changes = %+v\nwant %+v", ch, want)
	}
	base := map[string]string{"a.md": EntryChecksum("old"), "gone.md": EntryChecksum("bye")}
	req := DreamApplyRequest(base, ch)
	if len(req.Upserts) != 2 || len(req.Deletes) != 1 {
		t.Fatalf("request = %+v", req)
	}
	if *req.Upserts[0].Base != base["a.md"] || *req.Upserts[1].Base != "" || *req.Deletes[0].Base != base["gone.md"] {
		t.Errorf("bases: %q %q %q", *req.Upserts[0].Base, *req.Upserts[1].Base, *req.Deletes[0].Base)
	}
}

func TestDreamStale(t *testing.T) {
	base := map[string]string{"a.md": EntryChecksum("a"), "b.md": EntryChecksum("b"), "c.md": EntryChecksum("c")}
	tests := []struct {
		name string
		live []Entry
		want []string
	}{
		{"as at start", entries("a.md", "a", "b.md", "b", "c.md", "c"), nil},
		{"changed, deleted and added", entries("a.md", "A", "b.md", "b", "d.md", "d"), []string{"a.md", "c.md", "d.md"}},
	}
	for _, tc := range tests {
		if got := DreamStale(base, tc.live); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: stale = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDreamReviewCheck(t *testing.T) {
	ok := Dream{ID: "drm_x", Behavior: DreamCreateNew, Status: DreamCompleted, Review: DreamReview{State: ReviewPending}, OutputStoreUID: "u"}
	tests := []struct {
		name     string
		edit     func(*Dream)
		to       DreamReviewState
		done     bool
		wantCode string
	}{
		{"pending apply", func(*Dream) {}, ReviewApplied, false, ""},
		{"applied again", func(d *Dream) { d.Review.State = ReviewApplied }, ReviewApplied, true, ""},
		{"discard after apply", func(d *Dream) { d.Review.State = ReviewApplied }, ReviewDiscarded, false, EInvalid},
		{"running", func(d *Dream) { d.Status, d.Review.State = DreamRunning, ReviewNone }, ReviewApplied, false, EInvalid},
		{"failed", func(d *Dream) { d.Status, d.Review.State = DreamFailed, ReviewNone }, ReviewDiscarded, false, EInvalid},
		{"update_existing", func(d *Dream) { d.Behavior, d.Review.State = DreamUpdateExisting, ReviewNone }, ReviewApplied, false, EInvalid},
	}
	for _, tc := range tests {
		d := ok
		tc.edit(&d)
		done, err := DreamReviewCheck(d, tc.to)
		if done != tc.done || ErrorCode(err) != tc.wantCode {
			t.Errorf("%s: done %v err %v, want %v %q", tc.name, done, err, tc.done, tc.wantCode)
		}
	}
}
