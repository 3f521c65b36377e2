package consolidate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

func newBox(files map[string]string) (*consolidate.MemTree, *consolidate.TreeToolbox) {
	tree := consolidate.NewMemTree(files)
	return tree, consolidate.NewTreeToolbox(context.Background(), tree, map[string]string{"sessions/sesn_1.md": "session said: use port 9090\n"})
}

func input(v map[string]any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

func TestTreeToolboxIndexCaps(t *testing.T) {
	t.Parallel()
	lines := func(n int) string { return strings.Repeat("- [a](a.md) — x\n", n) }
	cases := []struct {
		name, path, content string
		refused             bool
	}{
		{"200 lines", "MEMORY.md", lines(200), false},
		{"201 lines", "/MEMORY.md", lines(201), true},
		{"201 lines without final newline", "MEMORY.md", strings.TrimSuffix(lines(201), "\n"), true},
		{"nested index over bytes", "team/MEMORY.md", strings.Repeat("x", 25_001), true},
		{"index at 25000 bytes", "team/deep/MEMORY.md", strings.Repeat("x", 25_000), false},
		{"topic file has no cap", "notes.md", lines(300), false},
		{"only the exact name", "MEMORY.md.bak", lines(300), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tree, box := newBox(nil)
			out := mustCall(t, box, "write", input(map[string]any{"path": c.path, "content": c.content}), c.refused)
			_, err := tree.Read(context.Background(), strings.TrimPrefix(c.path, "/"))
			if c.refused {
				if !strings.Contains(out, "200 lines and 25000 bytes") || err == nil || len(box.Denied()) != 1 {
					t.Errorf("refusal %q, stored err %v, denied %v", out, err, box.Denied())
				}
			} else if err != nil {
				t.Errorf("not stored: %v", err)
			}
		})
	}
	t.Run("edit past the cap", func(t *testing.T) {
		t.Parallel()
		tree, box := newBox(map[string]string{"MEMORY.md": lines(200)})
		mustCall(t, box, "read", `{"path":"MEMORY.md"}`, false)
		out := mustCall(t, box, "edit", input(map[string]any{"path": "MEMORY.md", "old_string": "x\n", "new_string": "x\ny\n", "replace_all": true}), true)
		if got := tree.Files()["MEMORY.md"]; got != lines(200) || !strings.Contains(out, "200 lines") {
			t.Errorf("edit past the cap: %q; index now %d bytes", out, len(got))
		}
	})
}

func TestTreeToolboxEditNeedsRead(t *testing.T) {
	t.Parallel()
	tree, box := newBox(map[string]string{"a.md": "one two"})
	edit := `{"path":"/a.md","old_string":"one","new_string":"1"}`
	mustCall(t, box, "grep", `{"pattern":"one"}`, false) // a grep shows lines, not the file
	if out := mustCall(t, box, "edit", edit, true); !strings.Contains(out, "read /a.md before editing it") {
		t.Errorf("edit before read: %q", out)
	}
	mustCall(t, box, "read", `{"path":"a.md"}`, false)
	mustCall(t, box, "edit", edit, false)
	mustCall(t, box, "write", `{"path":"b.md","content":"x y"}`, false)
	mustCall(t, box, "edit", `{"path":"b.md","old_string":"x","new_string":"z"}`, false) // a file written is known
	if f := tree.Files(); f["a.md"] != "1 two" || f["b.md"] != "z y" {
		t.Errorf("files = %v", f)
	}
}

func TestTreeToolboxSourcesAreReadOnly(t *testing.T) {
	t.Parallel()
	tree, box := newBox(map[string]string{"a.md": "a"})
	if out := mustCall(t, box, "read", `{"path":"/sessions/sesn_1.md"}`, false); !strings.Contains(out, "9090") {
		t.Errorf("read source = %q", out)
	}
	if out := mustCall(t, box, "glob", `{"pattern":"sessions/*.md"}`, false); out != "/sessions/sesn_1.md" {
		t.Errorf("glob = %q", out)
	}
	for _, c := range []struct{ name, input string }{
		{"write", `{"path":"sessions/sesn_1.md","content":"x"}`},
		{"edit", `{"path":"/sessions/sesn_1.md","old_string":"9090","new_string":"1"}`},
		{"delete", `{"path":"sessions/sesn_1.md"}`},
	} {
		if out := mustCall(t, box, c.name, c.input, true); !strings.Contains(out, "read-only session material") {
			t.Errorf("%s: %q", c.name, out)
		}
	}
	if f := tree.Files(); len(f) != 1 || len(box.Touched()) != 0 || len(box.Denied()) != 3 {
		t.Errorf("files %v touched %v denied %v", f, box.Touched(), box.Denied())
	}
}

func TestTreeToolboxInvalidPaths(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", " ", "/", "../a.md", "a/../../b.md", "team//a.md", "./a.md", "a\x00.md", "a\nb.md", `team\a.md`} {
		tree, box := newBox(nil)
		mustCall(t, box, "write", input(map[string]any{"path": p, "content": "x"}), true)
		if len(tree.Files()) != 0 || len(box.Denied()) != 1 {
			t.Errorf("%q: files %v denied %v", p, tree.Files(), box.Denied())
		}
	}
	_, box := newBox(map[string]string{"a.md": "a"})
	mustCall(t, box, "list", `{"path":"../x"}`, true)
	mustCall(t, box, "grep", `{"pattern":"(","path":"/"}`, true)
	mustCall(t, box, "shell", `{}`, true)
	mustCall(t, box, "read", `[1]`, true)
	if out := mustCall(t, box, "read", `{"path":"missing.md"}`, true); out != "/missing.md does not exist" {
		t.Errorf("missing = %q", out)
	}
	if out := mustCall(t, box, "delete", `{"path":"missing.md"}`, true); out != "/missing.md does not exist" {
		t.Errorf("delete missing = %q", out)
	}
}

func TestRunnerBeforeTurnStopsWithUsage(t *testing.T) {
	t.Parallel()
	stop := errors.New("dream canceled")
	script := llmtest.NewScript(
		turn(oneTurn, call("1", "list", nil)),
		turn(oneTurn, call("2", "read", map[string]any{"path": "a.md"})),
		llmtest.Text("never sent"),
	)
	_, box := newBox(map[string]string{"a.md": "a"})
	var seen []int
	var used []llm.Usage
	r := &consolidate.Runner{Model: script, Toolbox: box, System: "s", BeforeTurn: func(_ context.Context, turn int, u llm.Usage) error {
		seen, used = append(seen, turn), append(used, u)
		if turn == 3 {
			return stop
		}
		return nil
	}}
	res, err := r.Run(context.Background(), "go")
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v", err)
	}
	if len(seen) != 3 || seen[2] != 3 || used[0] != (llm.Usage{}) || used[2] != oneTurn.Add(oneTurn) {
		t.Errorf("BeforeTurn saw turns %v usage %v", seen, used)
	}
	if res.Turns != 2 || res.Usage != oneTurn.Add(oneTurn) || script.Remaining() != 1 {
		t.Errorf("result %+v, %d replies left", res, script.Remaining())
	}
}

func TestRunnerCanceledKeepsUsage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	script := llmtest.NewScript(turn(oneTurn, call("1", "list", nil)), llmtest.Text("never sent"))
	_, box := newBox(nil)
	r := &consolidate.Runner{Model: script, Toolbox: box, System: "s", OnTurn: func(int, string, int) { cancel() }}
	res, err := r.Run(ctx, "go")
	if !errors.Is(err, context.Canceled) || res.Usage != oneTurn || res.Turns != 1 {
		t.Errorf("err %v result %+v", err, res)
	}
}

func TestRunnerTurnLimit(t *testing.T) {
	t.Parallel()
	script := llmtest.NewScript(turn(oneTurn, call("1", "list", nil)), turn(oneTurn, call("2", "list", nil)))
	_, box := newBox(nil)
	res, err := (&consolidate.Runner{Model: script, Toolbox: box, System: "s", MaxTurns: 2}).Run(context.Background(), "go")
	if err != nil || !res.HitTurnLimit || res.Usage != oneTurn.Add(oneTurn) {
		t.Errorf("err %v result %+v", err, res)
	}
}
