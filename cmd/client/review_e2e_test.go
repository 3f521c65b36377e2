package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// v1Do sends one /v1 request to the server with key and decodes the JSON
// answer into out (when not nil), failing unless the status is want.
func v1Do(t *testing.T, server, key, method, path string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, server+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// TestReviewBeforeSharing runs the built client and server: with
// team_writes: review, a member's team file is held (status says so, the
// file stays, a second sync sends nothing), an admin's approval brings it to
// another machine, and a proposal gone stale conflicts on approval.
func TestReviewBeforeSharing(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	// The bootstrap key is the owner's; the member gets a key of their own.
	v1Do(t, srv, serverKey, http.MethodPost, "/v1/org/users", map[string]any{"handle": "dev", "role": "member"}, 201, nil)
	var created struct {
		Key string `json:"key"`
	}
	v1Do(t, srv, serverKey, http.MethodPost, "/v1/org/keys", map[string]any{"user": "dev", "name": "laptop"}, 201, &created)
	v1Do(t, srv, serverKey, http.MethodPatch, "/v1/org", map[string]any{"team_writes": "review"}, 200, nil)

	a := newMachine(t, srv, "git@github.com:acme/widgets.git")
	a.env = append(a.env, "TEAMMEM_API_KEY="+created.Key)
	b := newMachine(t, srv, "https://github.com/acme/widgets") // the owner's machine
	A, B := a.memDir(), b.memDir()
	b.write(B, "team/shared.md", "v1\n")
	b.must("sync")
	a.must("sync")

	a.write(A, "team/new.md", "a new team note\n")
	a.write(A, "team/shared.md", "v2 from the member\n")
	out := a.must("sync")
	contains(t, out, "held for review")
	contains(t, out, "the files stay here and are not sent again until they change): new.md, shared.md") // named
	st := a.status()
	contains(t, st, "new.md: held for review (proposal")
	contains(t, st, "shared.md: held for review (proposal")
	if read(t, A, "team/new.md") != "a new team note\n" {
		t.Fatal("the held file was not kept local")
	}
	// A second sync sends nothing again: still one pending proposal.
	a.must("sync")
	var list struct {
		Proposals []struct {
			ID      int64 `json:"id"`
			Changes []struct {
				Key string `json:"key"`
			} `json:"changes"`
		} `json:"proposals"`
	}
	v1Do(t, srv, serverKey, http.MethodGet, "/v1/proposals?status=pending", nil, 200, &list)
	if len(list.Proposals) != 1 || len(list.Proposals[0].Changes) != 2 {
		t.Fatalf("pending proposals = %+v, want one with two changes", list.Proposals)
	}
	b.must("sync")
	if read(t, B, "team/new.md") != "<missing>" {
		t.Fatal("a held file reached the other machine before approval")
	}

	// Approved: the other machine gets it; the member's status clears.
	id := list.Proposals[0].ID
	v1Do(t, srv, serverKey, http.MethodPost, fmt.Sprintf("/v1/proposals/%d/approve", id), nil, 200, nil)
	b.must("sync")
	if read(t, B, "team/new.md") != "a new team note\n" || read(t, B, "team/shared.md") != "v2 from the member\n" {
		t.Fatalf("after approval b has new.md=%q shared.md=%q", read(t, B, "team/new.md"), read(t, B, "team/shared.md"))
	}
	a.must("sync")
	if st := a.status(); strings.Contains(st, "held for review") {
		t.Fatalf("status still shows a hold after approval:\n%s", st)
	}

	// Stale: the member proposes an edit, the owner edits first; approval conflicts.
	a.write(A, "team/shared.md", "v3 from the member\n")
	contains(t, a.must("sync"), "held for review")
	b.write(B, "team/shared.md", "v3 from the owner\n")
	b.must("sync")
	v1Do(t, srv, serverKey, http.MethodGet, "/v1/proposals?status=pending", nil, 200, &list)
	if len(list.Proposals) != 1 {
		t.Fatalf("pending = %+v", list.Proposals)
	}
	v1Do(t, srv, serverKey, http.MethodPost, fmt.Sprintf("/v1/proposals/%d/approve", list.Proposals[0].ID), nil, 409, nil)
	b.must("sync")
	if got := read(t, B, filepath.Join("team", "shared.md")); got != "v3 from the owner\n" {
		t.Fatalf("a stale approval overwrote the owner's edit: %q", got)
	}
}
