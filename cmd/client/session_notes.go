package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/client/jobs/sessionmem"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// envSessionNotesUpload overrides the session-notes setting: truthy turns
// the upload on, falsy off, whatever the settings file says.
const envSessionNotesUpload = "TEAMMEM_SESSION_NOTES_UPLOAD"

// notesUploadTimeout bounds the upload at SessionEnd.
const notesUploadTimeout = 10 * time.Second

// sessionNotesKey is the setting in teammem's settings file
// (<user config dir>/teammem/settings.json, beside "memory_mode") that
// turns on the upload of a session's session-memory notes to the server at
// its end. It is off by default: the notes are the session's own words,
// and sharing them with the team is the user's choice.
const sessionNotesKey = "session_notes_upload"

func (a *app) settingsFile() (string, error) {
	d, err := a.configDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "teammem", settingsFileName), nil
}

// loadSettings reads teammem's settings file as raw values by key, so that
// a change of one setting keeps every other as it was; none saved is an
// empty map.
func (a *app) loadSettings() (map[string]json.RawMessage, string, error) {
	s := map[string]json.RawMessage{}
	p, err := a.settingsFile()
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return s, p, nil
	}
	if err != nil {
		return nil, p, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, p, fmt.Errorf("%s is not valid JSON: %v", p, err)
	}
	return s, p, nil
}

// setSetting writes one setting into teammem's settings file, atomically
// (0600 in the private config dir), keeping the others.
func (a *app) setSetting(key string, v any) error {
	s, p, err := a.loadSettings()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s[key] = raw
	if err := privateDir(filepath.Dir(p)); err != nil {
		return err
	}
	return writeJSONFile(p, s)
}

// sessionNotesUpload reports whether the notes upload is on, and where
// that was decided: the variable when set, else the settings file, else
// the default (off).
func (a *app) sessionNotesUpload() (bool, string) {
	if v := a.getenv(envSessionNotesUpload); v != "" {
		on, err := strconv.ParseBool(v)
		return err == nil && on, envSessionNotesUpload
	}
	s, p, err := a.loadSettings()
	if err != nil {
		return false, err.Error()
	}
	var on bool
	if v, ok := s[sessionNotesKey]; ok {
		if err := json.Unmarshal(v, &on); err != nil {
			return false, fmt.Sprintf("%s: %s is not true or false", p, sessionNotesKey)
		}
		return on, p
	}
	return false, "default"
}

// hookUploadNotes uploads, when the user turned it on, the ending
// session's notes for the repo (PUT /v1/sessions/{id}/notes): after a
// local secret scan (a finding skips the upload with a notice naming the
// rules) and within the server's cap. Whatever happens is only logged: it
// never fails the hook.
func (a *app) hookUploadNotes(ctx context.Context, log *hookLog, in hookInput) {
	if on, _ := a.sessionNotesUpload(); !on {
		return
	}
	msg := a.uploadNotes(ctx, in)
	log.printf("session notes: %s", msg)
}

// uploadNotes does hookUploadNotes' work and says what came of it.
func (a *app) uploadNotes(ctx context.Context, in hookInput) string {
	if _, err := teammem.SessionPublicID(in.SessionID); err != nil {
		return fmt.Sprintf("not uploaded: session id %q is not a UUID", in.SessionID)
	}
	loc, err := a.location()
	if err != nil {
		return "not uploaded: " + err.Error()
	}
	o, err := a.sessionOptions(loc, in.SessionID, first(in.TranscriptPath, os.DevNull), in.Cwd)
	if err != nil {
		return "not uploaded: " + err.Error()
	}
	notes, ok := sessionmem.ReadNotes(o.NotesPath, o.Texts.Template)
	if !ok {
		return "none to upload"
	}
	if len(notes) > teammem.SessionNotesMaxBytes {
		return fmt.Sprintf("not uploaded: %d bytes, more than the %d the server accepts", len(notes), teammem.SessionNotesMaxBytes)
	}
	if rules, err := notesSecretRules(notes); err != nil || len(rules) > 0 {
		if err != nil {
			return "not uploaded: the secret scanner failed: " + err.Error()
		}
		return "not uploaded: they hold what looks like a secret (" + strings.Join(rules, ", ") + ")"
	}
	repo, err := a.repoSlug(loc)
	if err != nil {
		return "not uploaded: " + err.Error()
	}
	server, key, err := a.credentials()
	if err != nil {
		return "not uploaded: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, notesUploadTimeout)
	defer cancel()
	c := &apiclient.Client{BaseURL: server, Key: key, Repo: repo, UserAgent: "teammem-client", SessionID: in.SessionID,
		HTTP: &http.Client{Timeout: notesUploadTimeout}}
	s, err := c.SessionNotesPut(ctx, in.SessionID, notes)
	if err != nil {
		return "not uploaded: " + apiclient.FailureOf(err).Message
	}
	return fmt.Sprintf("uploaded %d bytes for %s as %s", len(notes), repo, s.ID)
}

// notesSecretRules returns the rule ids of the secrets the scanner finds
// in notes, sorted, without repeats.
func notesSecretRules(notes string) ([]string, error) {
	sc, err := secretscan.New()
	if err != nil {
		return nil, err
	}
	var rules []string
	for _, f := range sc.Scan(notes, nil) {
		if !slices.Contains(rules, f.RuleID) {
			rules = append(rules, f.RuleID)
		}
	}
	slices.Sort(rules)
	return rules, nil
}
