package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/client/jobs/sessionmem"
	"github.com/teammem/teammem/internal/testing/secrettest"
)

// sessionGet asks the server for a session as the bootstrap key.
func sessionGet(t *testing.T, server, id string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, server+"/v1/sessions/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+serverKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return res.StatusCode, m
}

// TestHookUploadsSessionNotes: the SessionEnd hook uploads the ending
// session's notes only once the user turned it on, and never notes that
// hold a secret; it exits 0 and prints nothing in every case.
func TestHookUploadsSessionNotes(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	m := newMachine(t, srv, "git@github.com:acme/notes.git")
	m.env = append(m.env, "TEAMMEM_HOOK_TIMEOUT=", "TEAMMEM_SESSION_MEMORY=", "TEAMMEM_SESSION_NOTES_UPLOAD=")
	claude := filepath.Join(m.home, ".claude")
	writeNotes := func(session, text string) {
		p := sessionmem.NotesPath(claude, m.repo, session)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const (
		plain  = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
		secret = "6d1486c5-68b6-4037-a23e-e133ff5f62c8"
	)
	writeNotes(plain, "# Current State\n\nWe chose SQLite for the cache.\n")
	writeNotes(secret, "# Current State\n\nThe token is "+secrettest.Token("github-pat")+"\n")

	// Off by default: nothing is uploaded.
	m.mustHook(m.hookInput("SessionEnd", plain, ""))
	if code, _ := sessionGet(t, srv, "sesn_5c0375b457a54f26b12dd022ee4e51b7"); code != http.StatusNotFound {
		t.Fatalf("with the upload off the server knows the session (%d)", code)
	}
	if strings.Contains(m.hookLog(), "session notes:") {
		t.Fatalf("the hook mentioned notes while the upload is off:\n%s", m.hookLog())
	}

	m.must("config", "session-notes", "on")
	m.mustHook(m.hookInput("SessionEnd", plain, ""))
	contains(t, m.hookLog(), "session notes: uploaded")
	code, s := sessionGet(t, srv, "sesn_5c0375b457a54f26b12dd022ee4e51b7")
	if ext, _ := s["teammem"].(map[string]any); code != http.StatusOK || ext["notes_uploaded"] != true || s["status"] != "terminated" {
		t.Fatalf("after the upload: %d %v", code, s)
	}

	m.mustHook(m.hookInput("SessionEnd", secret, ""))
	contains(t, m.hookLog(), "session notes: not uploaded: they hold what looks like a secret (github-pat)")
	if code, _ := sessionGet(t, srv, "sesn_6d1486c568b64037a23ee133ff5f62c8"); code != http.StatusNotFound {
		t.Fatalf("notes holding a secret reached the server (%d)", code)
	}
}
