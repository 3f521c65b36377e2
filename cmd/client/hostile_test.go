package main_test

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
)

// hostileKeys are keys a malicious or buggy server might send, each trying
// to make the client write, delete or read outside the memory directory.
var hostileKeys = []string{
	"../escape.md",
	"a/../../escape.md",
	"/tmp/teammem-absolute.md",
	`sub\..\..\escape.md`,
	"%2e%2e/escape.md",
	"..%2Fescape.md",
	"．．／escape.md",
	"link/evil.md",     // team/link is a symlink to a directory outside
	"dangling/evil.md", // team/dangling is a dangling symlink to outside
	"loop/evil.md",     // team/loop is a symlink loop
	"outside-file.md",  // team/outside-file.md is a symlink to a file outside
	"",
	".",
	"a\x00b.md",
}

// TestHostileServerCannotEscape points `teammem pull` and `push` at a fake
// server that sends every hostile key as an upsert, a deletion and a 409
// conflict: nothing outside the memory directory is written, deleted or read.
func TestHostileServerCannotEscape(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mem := filepath.Join(root, "memory")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(mem, "team"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	victim := filepath.Join(root, "victim.md")
	if err := os.WriteFile(victim, []byte("do not touch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secretOutside := filepath.Join(outside, "private.md")
	if err := os.WriteFile(secretOutside, []byte("PRIVATE-OUTSIDE-CONTENT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"link": outside, "dangling": filepath.Join(outside, "nowhere"), "outside-file.md": secretOutside}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(mem, "team", name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("loop", filepath.Join(mem, "team", "loop")); err != nil {
		t.Fatal(err)
	}
	before := snapshotTree(t, root, mem)

	var received []string // bodies the client sent, to check nothing from outside leaked
	changes := func(scope string) []map[string]any {
		var out []map[string]any
		keys := append([]string{}, hostileKeys...)
		if scope == "personal" {
			keys = append(keys, "team/evil.md", "team")
		}
		for _, k := range keys {
			content := "HOSTILE " + k
			out = append(out, map[string]any{"key": k, "op": "upsert", "checksum": "sha256:x", "content": content, "version": 1},
				map[string]any{"key": k, "op": "delete", "checksum": "sha256:y", "version": 2})
		}
		out = append(out, map[string]any{"key": "../victim.md", "op": "delete", "checksum": "sha256:z", "version": 2},
			map[string]any{"key": "fine.md", "op": "upsert", "checksum": "sha256:f", "content": "a fine file\n", "version": 3})
		return out
	}
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		scope := "team"
		if strings.Contains(r.URL.Path, "/personal") {
			scope = "personal"
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/changes"):
			_ = json.NewEncoder(w).Encode(map[string]any{"version": 3, "checksum": "sha256:h", "changes": changes(scope)})
		case strings.HasSuffix(r.URL.Path, "/batch"):
			b := make([]byte, 1<<20)
			n, _ := r.Body.Read(b)
			received = append(received, string(b[:n]))
			var conflicts []map[string]any
			for _, k := range append(hostileKeys, "local.md") {
				conflicts = append(conflicts, map[string]any{"key": k, "checksum": "sha256:c", "content": "HOSTILE CONFLICT"})
			}
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "conflict", "message": "x",
				"details": map[string]any{"conflicts": conflicts}}})
		case r.URL.Query().Get("view") == "head":
			_ = json.NewEncoder(w).Encode(map[string]any{"version": 3, "checksum": "sha256:h"})
		default: // a snapshot: the change list's checksums do not add up to its head, so the client asks for one
			var entries []map[string]any
			for _, c := range changes(scope) {
				if c["op"] == "upsert" {
					entries = append(entries, c)
				}
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"version": 3, "checksum": "sha256:h", "entries": entries})
		}
	}))
	defer fake.Close()

	m := newMachine(t, fake.URL, "git@github.com:acme/widgets.git")
	m.env = append(m.env, "TEAMMEM_MEMORY_DIR="+mem)
	m.write(mem, "team/local.md", "local edit\n")
	_, _, _ = m.run("pull")
	_, _, _ = m.run("push")

	after := snapshotTree(t, root, mem)
	if strings.Join(before, "\n") != strings.Join(after, "\n") {
		t.Fatalf("files outside the memory dir changed:\nbefore %v\nafter  %v", before, after)
	}
	if b, _ := os.ReadFile(victim); string(b) != "do not touch\n" {
		t.Fatalf("victim changed: %q", b)
	}
	if read(t, mem, "team/fine.md") != "a fine file\n" {
		t.Fatalf("the valid entry was not written: %q", read(t, mem, "team/fine.md"))
	}
	if _, err := os.Lstat(filepath.Join(mem, "team", "evil.md")); err == nil {
		t.Fatal("a personal key wrote into team/")
	}
	for _, body := range received {
		if strings.Contains(body, "PRIVATE-OUTSIDE-CONTENT") {
			t.Fatal("the client uploaded a file from outside the memory dir")
		}
	}
	// Symlinks inside the memory dir are untouched.
	for name := range links {
		if fi, err := os.Lstat(filepath.Join(mem, "team", name)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("symlink %s was replaced: %v", name, err)
		}
	}
}

// snapshotTree lists every path under root outside skip, with file contents.
func snapshotTree(t *testing.T, root, skip string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == skip {
			return filepath.SkipDir
		}
		entry := p
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			entry += "=" + string(b)
		}
		out = append(out, entry)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Absolute-path keys must not have landed anywhere either.
	if _, err := os.Stat("/tmp/teammem-absolute.md"); err == nil {
		t.Fatal("an absolute key was written")
	}
	sort.Strings(out)
	return out
}

// TestHostileServerLimits points the client at servers that send an entry
// over the size cap, a 200 MB answer, or redirects to another port: nothing
// is written for the first two, and the key never reaches the other port.
func TestHostileServerLimits(t *testing.T) {
	t.Parallel()
	head := map[string]any{"scope": "team", "version": 3, "checksum": "sha256:" + strings.Repeat("3", 64), "max_entry_bytes": 1 << 20}
	changes := func(entries ...map[string]any) map[string]any {
		body := map[string]any{"since": 0, "changes": entries}
		for k, v := range head {
			body[k] = v
		}
		return body
	}
	entry := func(key, content string) map[string]any {
		return map[string]any{"key": key, "op": "upsert", "checksum": "sha256:x", "content": content, "version": 3}
	}
	var seen atomic.Int32 // requests the redirect target got
	var keySeen atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		if r.Header.Get("Authorization") != "" || r.Header.Get("x-api-key") != "" {
			keySeen.Store(true)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(changes(entry("stolen.md", "via the redirect\n")))
	}))
	t.Cleanup(other.Close)

	hostile := map[string]http.HandlerFunc{
		"big entry": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			list := []map[string]any{entry("big.md", strings.Repeat("x", 300_000)), entry("fine.md", "fine\n")}
			switch {
			case strings.HasSuffix(r.URL.Path, "/changes"):
				_ = json.NewEncoder(w).Encode(changes(list...))
			case r.URL.Query().Get("view") == "head":
				_ = json.NewEncoder(w).Encode(head)
			default: // its checksums do not add up, so the client asks for a snapshot
				snap := changes()
				snap["entries"] = list
				_ = json.NewEncoder(w).Encode(snap)
			}
		},
		"200 MB": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if !strings.HasSuffix(r.URL.Path, "/changes") {
				_ = json.NewEncoder(w).Encode(head)
				return
			}
			_, _ = io.WriteString(w, `{"scope":"team","version":3,"changes":[{"key":"huge.md","op":"upsert","content":"`)
			chunk := []byte(strings.Repeat("x", 1<<16))
			for sent := 0; sent < 200<<20; sent += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return // the client hung up, as it should
				}
			}
			_, _ = io.WriteString(w, `"}]}`)
		},
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		},
	}
	for name, h := range hostile {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake := httptest.NewServer(h)
			defer fake.Close()
			mem := filepath.Join(t.TempDir(), "memory")
			if err := os.MkdirAll(filepath.Join(mem, "team"), 0o755); err != nil {
				t.Fatal(err)
			}
			m := newMachine(t, fake.URL, "git@github.com:acme/widgets.git")
			m.env = append(m.env, "TEAMMEM_MEMORY_DIR="+mem)
			out, errOut, code := m.run("pull", "--scope", "team")
			switch name {
			case "big entry":
				if code != 0 || read(t, mem, "team/fine.md") != "fine\n" || !strings.Contains(out, "skipped big.md: larger than 250000 bytes") {
					t.Fatalf("exit %d\n%s%s", code, out, errOut)
				}
				if _, err := os.Lstat(filepath.Join(mem, "team", "big.md")); err == nil {
					t.Fatal("the oversized entry was written")
				}
			case "200 MB":
				if code != 4 || !strings.Contains(out, "larger than the client's limit") {
					t.Fatalf("exit %d\n%s%s", code, out, errOut)
				}
			case "redirect":
				m.write(mem, "team/local.md", "to push\n")
				out2, _, code2 := m.run("push", "--scope", "team")
				if code != 4 || code2 != 4 || !strings.Contains(out, "the server answered a redirect (307 to "+other.URL) {
					t.Fatalf("exit %d, %d\n%s%s%s", code, code2, out, out2, errOut)
				}
			}
			if name != "big entry" {
				if entries, _ := os.ReadDir(filepath.Join(mem, "team")); len(entries) > 1 || len(entries) == 1 && entries[0].Name() != "local.md" {
					t.Fatalf("written: %v", entries)
				}
			}
		})
	}
	t.Cleanup(func() {
		if seen.Load() != 0 || keySeen.Load() {
			t.Errorf("the redirect target got %d requests (key sent: %v)", seen.Load(), keySeen.Load())
		}
	})
}
