package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/testing/e2etest"
	"github.com/teammem/teammem/internal/testing/fixtures"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// extractSession is the session of the repository's transcript the extract tests read
// (testdata/<id>.jsonl): a summary, a prompt asking for a Jupyter notebook, a streamed reply
// and two tool calls; 6 main-chain messages.
const (
	extractSession  = "b7e2c4a6-3d1f-4e8b-9a5c-7f1e3d5b9c2a"
	extractMessages = 6
	extractPrompt   = "set up a jupyter notebook"
)

// extractTranscript is the absolute path of the repository's transcript.
func extractTranscript(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", extractSession+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// saveReplies is a model's two-step save of one memory at key, indexed in
// the MEMORY.md of key's directory.
func saveReplies(key, memType string) []llmtest.Reply {
	index := "MEMORY.md"
	if dir := filepath.Dir(key); dir != "." {
		index = dir + "/MEMORY.md"
	}
	write := llmtest.ToolUse("w1", "write", map[string]string{"path": key,
		"content": "---\nname: Notebook per pipeline step\ndescription: the developer tests each step of the music pipeline in a Jupyter notebook\ntype: " + memType + "\n---\n\nKeep a notebook that runs each step on its own.\n"})
	link := llmtest.ToolUse("w2", "write", map[string]string{"path": index,
		"content": "- [Notebook per step](" + filepath.Base(key) + ") — test each pipeline step in a notebook\n"})
	both := llmtest.Reply{}
	both.Response.Content = append(write.Response.Content, link.Response.Content...)
	return []llmtest.Reply{both, llmtest.Text("Saved one memory.")}
}

// withoutModel drops any model configuration the test process inherited.
var withoutModel = []string{"TEAMMEM_LLM_PROVIDER=", "TEAMMEM_LLM_MODEL=", "TEAMMEM_LLM_BASE_URL=", "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=",
	"TEAMMEM_EXTRACT_EVERY=", "TEAMMEM_TELEMETRY="}

func TestExtractWithAnthropic(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	m := newMachine(t, srv, "https://github.com/acme/widgets.git")
	script := llmtest.NewScript(saveReplies("feedback_notebooks.md", "feedback")...)
	m.env = append(m.env, withoutModel...)
	m.env = append(m.env, "TEAMMEM_LLM_PROVIDER=anthropic", "TEAMMEM_LLM_MODEL=claude-test", "ANTHROPIC_API_KEY=test",
		"TEAMMEM_LLM_BASE_URL="+llmtest.AnthropicServer(t, script), "TEAMMEM_TELEMETRY=1")
	dir := m.memDir()

	out := m.must("extract", "--session", extractSession, "--transcript", extractTranscript(t))
	contains(t, out, "Saved 1 memory\n")
	contains(t, out, filepath.Join(dir, "feedback_notebooks.md"))
	contains(t, read(t, dir, "feedback_notebooks.md"), "type: feedback")
	contains(t, read(t, dir, "MEMORY.md"), "- [Notebook per step](feedback_notebooks.md)")
	if n := len(script.Calls()); n != 2 {
		t.Fatalf("model calls = %d", n)
	}
	contains(t, script.Calls()[0].Request.Messages[0].Content[0].Text, extractPrompt)

	// The cursor was saved: nothing new the second time, and no model call.
	out = m.must("extract", "--session", extractSession, "--transcript", extractTranscript(t))
	contains(t, out, "Nothing saved: no new messages since the last extraction")
	if n := len(script.Calls()); n != 2 {
		t.Fatalf("second run called the model (%d calls)", n)
	}

	// Both runs reached the server as counters.
	body := e2etest.Scrape(t, srv)
	for _, want := range []string{`teammem_client_extract_runs_total{org="default",outcome="saved"} 1`,
		`teammem_client_extract_runs_total{org="default",outcome="skipped"} 1`, `teammem_client_extract_skipped_total{org="default",reason="no_messages"} 1`} {
		contains(t, body, want)
	}
}

func TestExtractWithOpenAIFindsTranscript(t *testing.T) {
	t.Parallel()
	checkExtractFindsTranscript(t, extractTranscript(t), extractSession, extractMessages)
}

func TestExtractWithOpenAIFindsFixtureTranscript(t *testing.T) {
	t.Parallel()
	const session = "d3ad4cdc-5657-435d-98fa-0035d53e383d"
	checkExtractFindsTranscript(t, fixtures.Path(t, "transcripts", "chiphuyen__sniffly__"+session+".jsonl"), session, 125)
}

// checkExtractFindsTranscript puts the transcript at path where Claude Code keeps the
// session's, runs extract by session id against an OpenAI-compatible model that saves a team
// memory, and checks the report counts messages messages.
func checkExtractFindsTranscript(t *testing.T, path, session string, messages int) {
	t.Helper()
	m := newMachine(t, "http://127.0.0.1:9", "https://github.com/acme/widgets.git")
	script := llmtest.NewScript(saveReplies("team/project_notebooks.md", "project")...)
	m.env = append(m.env, withoutModel...)
	m.env = append(m.env, "TEAMMEM_LLM_PROVIDER=openai", "TEAMMEM_LLM_MODEL=llama-test", "TEAMMEM_LLM_BASE_URL="+llmtest.OpenAIServer(t, script))
	dir := m.memDir()
	if err := os.MkdirAll(filepath.Join(dir, "team"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Claude Code keeps the transcript next to memory/ when the clone is the
	// git root; extract finds it by session id.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m.write(filepath.Dir(dir), session+".jsonl", string(raw))

	out := m.must("extract", "--session", session, "--json")
	var rep struct {
		Outcome       string   `json:"outcome"`
		MemoriesSaved int      `json:"memories_saved"`
		TeamSaved     int      `json:"team_saved"`
		Files         []string `json:"files"`
		Messages      int      `json:"messages"`
		Turns         int      `json:"turns"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Outcome != "saved" || rep.MemoriesSaved != 1 || rep.TeamSaved != 1 || rep.Turns != 2 || rep.Messages != messages ||
		strings.Join(rep.Files, ",") != "team/project_notebooks.md,team/MEMORY.md" {
		t.Fatalf("report = %+v", rep)
	}
	contains(t, read(t, dir, "team/project_notebooks.md"), "type: project")
	contains(t, read(t, dir, "team/MEMORY.md"), "(project_notebooks.md)")
	// The team variant of the prompt went over the wire.
	contains(t, string(script.Calls()[0].Body), "team/MEMORY.md")
}

func TestExtractWithoutModel(t *testing.T) {
	t.Parallel()
	m := newMachine(t, "http://127.0.0.1:9", "https://github.com/acme/widgets.git")
	m.env = append(m.env, withoutModel...)
	out, errOut, code := m.run("extract", "--session", extractSession, "--transcript", extractTranscript(t))
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"extract needs a model", "TEAMMEM_LLM_PROVIDER", "TEAMMEM_LLM_MODEL", "ANTHROPIC_API_KEY"} {
		contains(t, errOut, want)
	}
	// Bad usage is told apart from a failure.
	if _, errOut, code := m.run("extract"); code != 2 || !strings.Contains(errOut, "--session") {
		t.Fatalf("extract without arguments: exit %d, %s", code, errOut)
	}
	// A session without a transcript says where it looked.
	if _, errOut, code := m.run("extract", "--session", "no-such-session"); code != 1 || !strings.Contains(errOut, "no transcript for session no-such-session") {
		t.Fatalf("missing transcript: exit %d, %s", code, errOut)
	}
}
