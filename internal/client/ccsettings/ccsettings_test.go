package ccsettings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const ours = "/opt/bin/teammem hook"

// original is a settings file of the user's own: other keys in an order of
// their choosing, a key teammem knows nothing about, and a hook of theirs.
const original = `{
  "model": "opus",
  "zzUnknown": {"keep": [1, 2, 3]},
  "hooks": {
    "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say done"}]}],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
  },
  "alpha": true
}
`

// writeSettings puts data in a settings file of a fresh directory.
func writeSettings(t *testing.T, data string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func read(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// topKeys returns the top-level keys of a settings file in their order.
func topKeys(t *testing.T, data string) []string {
	t.Helper()
	o, err := parseObject([]byte(data))
	if err != nil {
		t.Fatalf("%v:\n%s", err, data)
	}
	return o.keys
}

func decode(t *testing.T, data string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("%v:\n%s", err, data)
	}
	return v
}

// TestInstallKeepsTheRest: install adds our entry to each event and keeps
// every other key (known or not), its value and the keys' order, and the
// user's own hooks beside ours.
func TestInstallKeepsTheRest(t *testing.T) {
	file := writeSettings(t, original)
	res, err := Install(file, ours, []string{"SessionStart", "Stop", "SessionEnd"})
	if err != nil || !res.Changed || res.Removed != 0 {
		t.Fatalf("Install = %+v, %v", res, err)
	}
	got := read(t, file)
	if keys := topKeys(t, got); !reflect.DeepEqual(keys, []string{"model", "zzUnknown", "hooks", "alpha"}) {
		t.Errorf("keys = %v, want the original order", keys)
	}
	v := decode(t, got)
	if !reflect.DeepEqual(v["zzUnknown"], decode(t, original)["zzUnknown"]) || v["model"] != "opus" || v["alpha"] != true {
		t.Errorf("other settings changed:\n%s", got)
	}
	if n := strings.Count(got, `"command": "`+ours+`"`); n != 3 {
		t.Errorf("our command appears %d times, want 3:\n%s", n, got)
	}
	for _, theirs := range []string{"say done", "notify-send hi"} {
		if !strings.Contains(got, theirs) {
			t.Errorf("the user's hook %q is gone:\n%s", theirs, got)
		}
	}
	if !strings.Contains(got, `"timeout": 30`) || !strings.HasSuffix(got, "}\n") {
		t.Errorf("entry timeout or final newline missing:\n%s", got)
	}
}

// TestInstallUninstallIdempotent: installing twice writes once; uninstall
// gives back the original settings, and a second uninstall does nothing.
func TestInstallUninstallIdempotent(t *testing.T) {
	file := writeSettings(t, original)
	events := []string{"SessionStart", "SessionEnd"}
	if _, err := Install(file, ours, events); err != nil {
		t.Fatal(err)
	}
	installed := read(t, file)
	res, err := Install(file, ours, events)
	if err != nil || res.Changed || res.Removed != 0 || read(t, file) != installed {
		t.Fatalf("second Install = %+v, %v; file changed: %v", res, err, read(t, file) != installed)
	}
	res, err = Uninstall(file, ours)
	if err != nil || !res.Changed || res.Removed != 2 {
		t.Fatalf("Uninstall = %+v, %v", res, err)
	}
	if got := read(t, file); !reflect.DeepEqual(decode(t, got), decode(t, original)) {
		t.Errorf("after uninstall:\n%s", got)
	}
	after := read(t, file)
	if res, err := Uninstall(file, ours); err != nil || res.Changed || res.Removed != 0 || read(t, file) != after {
		t.Errorf("second Uninstall = %+v, %v", res, err)
	}
}

// TestInstallReplacesOlder: an entry of teammem from another path, or one
// in an event the plan no longer needs, is replaced and counted.
func TestInstallReplacesOlder(t *testing.T) {
	file := writeSettings(t, `{"hooks": {
  "SessionStart": [{"hooks": [{"type": "command", "command": "'/old path/teammem' hook --sync-only"}]}],
  "PreCompact": [{"hooks": [{"type": "command", "command": "/usr/bin/teammem hook"}, {"type": "command", "command": "mine"}]}]
}}`)
	res, err := Install(file, ours, []string{"SessionStart"})
	if err != nil || !res.Changed || res.Removed != 2 {
		t.Fatalf("Install = %+v, %v", res, err)
	}
	got := read(t, file)
	if strings.Contains(got, "old path") || strings.Contains(got, "/usr/bin/teammem") || !strings.Contains(got, `"mine"`) {
		t.Errorf("older entries kept or the user's dropped:\n%s", got)
	}
}

// TestNewFile: install creates a missing file and its directory; uninstall
// of a missing file does nothing and creates nothing.
func TestNewFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "new", ".claude", "settings.json")
	if res, err := Uninstall(file, ours); err != nil || res.Changed {
		t.Fatalf("Uninstall of no file = %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Dir(file)); !os.IsNotExist(err) {
		t.Fatalf("uninstall made %s", filepath.Dir(file))
	}
	if _, err := Install(file, ours, []string{"SessionEnd"}); err != nil {
		t.Fatal(err)
	}
	if keys := topKeys(t, read(t, file)); !reflect.DeepEqual(keys, []string{"hooks"}) {
		t.Errorf("keys = %v", keys)
	}
	if _, err := Uninstall(file, ours); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(read(t, file)); got != "{}" {
		t.Errorf("after uninstall: %q, want {}", got)
	}
}

// TestMalformedFileUntouched: a file that is not valid JSON, or not of the
// shape Claude Code reads, is named in a clear error and left as it was.
func TestMalformedFileUntouched(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"{\"model\": \"opus\",\n", "not valid JSON (line 2, column 0"},
		{`[1, 2]`, "not a JSON object"},
		{`{"hooks": []}`, `"hooks" is not a JSON object`},
		{`{"hooks": {"SessionStart": {}}}`, `"hooks.SessionStart" is not a JSON array`},
	} {
		file := writeSettings(t, c.data)
		_, err := Install(file, ours, []string{"SessionStart"})
		if err == nil || !strings.HasPrefix(err.Error(), file+": ") || !strings.Contains(err.Error(), c.want) ||
			!strings.HasSuffix(err.Error(), "; nothing was changed") {
			t.Errorf("Install over %q: %v, want %q", c.data, err, c.want)
		}
		if got := read(t, file); got != c.data {
			t.Errorf("Install over %q wrote %q", c.data, got)
		}
		entries, _ := os.ReadDir(filepath.Dir(file))
		if len(entries) != 1 {
			t.Errorf("Install over %q left %d files behind", c.data, len(entries))
		}
	}
}

// TestWriteKeepsModeAndLink: the file keeps its mode, and a settings file
// that is a symlink (a dotfile manager's) is written through the link.
func TestWriteKeepsModeAndLink(t *testing.T) {
	real := writeSettings(t, `{}`)
	link := filepath.Join(t.TempDir(), "settings.json")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	if _, err := Install(link, ours, []string{"Stop"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	fi, err := os.Stat(real)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, %v; want 0600", fi.Mode(), err)
	}
	if !strings.Contains(read(t, real), ours) {
		t.Errorf("the link's target was not written")
	}
}

// TestIsTeammemHook tells teammem's commands from others'.
func TestIsTeammemHook(t *testing.T) {
	for _, c := range []struct {
		command string
		want    bool
	}{
		{ours, true},
		{"  " + ours + "  ", true},
		{"/usr/local/bin/teammem hook", true},
		{"teammem hook --sync-only", true},
		{"/x/teammem hook --engine always", true},
		{`'/path with space/teammem' hook`, true},
		{`"/quoted/teammem" hook`, true},
		{`'/it'\''s/teammem' hook`, true},
		{"/x/teammem-other hook", false},
		{"/x/teammem sync", false},
		{"/x/teammem hook --other", false},
		{"echo teammem hook", false},
	} {
		if got := IsTeammemHook(c.command, ours); got != c.want {
			t.Errorf("IsTeammemHook(%q) = %v, want %v", c.command, got, c.want)
		}
	}
}
