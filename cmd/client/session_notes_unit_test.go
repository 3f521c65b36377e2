package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestSessionNotesUploadOffByDefault: with nothing saved and no variable
// the upload is off; `teammem config session-notes on` turns it on for
// good and keeps the file's other settings, the variable overrides the
// saved choice either way, and off turns it off again.
func TestSessionNotesUploadOffByDefault(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "cfg")
	env := map[string]string{"XDG_CONFIG_HOME": cfg}
	var out bytes.Buffer
	a := &app{getenv: func(k string) string { return env[k] }, stdout: &out, stderr: &out}
	if on, from := a.sessionNotesUpload(); on || from != "default" {
		t.Fatalf("default = %v from %s, want off", on, from)
	}
	run := func(args ...string) {
		t.Helper()
		root := a.root()
		root.SetArgs(args)
		root.SetOut(&out)
		if err := root.Execute(); err != nil {
			t.Fatalf("teammem %v: %v", args, err)
		}
	}
	// The other settings of the file are kept.
	if err := os.MkdirAll(filepath.Join(cfg, "teammem"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "teammem", settingsFileName), []byte(`{"memory_mode": "log"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if on, _ := a.sessionNotesUpload(); on {
		t.Fatal("on with a settings file that does not name it")
	}
	run("config", "session-notes", "on")
	if m := a.memoryMode(); m.Mode != modeLog {
		t.Fatalf("memory mode after config session-notes on = %+v", m)
	}
	if on, _ := a.sessionNotesUpload(); !on {
		t.Fatal("still off after config session-notes on")
	}
	env[envSessionNotesUpload] = "0"
	if on, from := a.sessionNotesUpload(); on || from != envSessionNotesUpload {
		t.Fatalf("%s=0: %v from %s", envSessionNotesUpload, on, from)
	}
	delete(env, envSessionNotesUpload)
	run("config", "session-notes", "off")
	if on, _ := a.sessionNotesUpload(); on {
		t.Fatal("still on after config session-notes off")
	}
	env[envSessionNotesUpload] = "1"
	if on, _ := a.sessionNotesUpload(); !on {
		t.Fatalf("%s=1 does not turn it on", envSessionNotesUpload)
	}
}
