package transcript

import (
	"path/filepath"
	"testing"

	"github.com/teammem/teammem/internal/testing/fixtures"
)

// realTranscripts returns the directory of the real-world transcripts, skipping the test
// when the fixtures are absent (see internal/testing/fixtures). Every behaviour checked on them is
// also checked on the repository's own transcripts (testdata_test.go).
func realTranscripts(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(fixtures.Dir(tb), "transcripts")
}

// Fixture file names.
const (
	fxSniffly      = "chiphuyen__sniffly__d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl"
	fxSnifflySum   = "chiphuyen__sniffly__ff71dbed-a4f2-4284-a4fc-fe2fb90de929.jsonl"
	fxViewer108    = "d-kimuson__claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
	fxViewer98     = "d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
	fxAgentParent  = "jazzyalex__agent-sessions__0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"
	fxAgentChild   = "jazzyalex__agent-sessions__0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f__subagents__agent-a0ad4f44468bdf20d.jsonl"
	fxSmall        = "jazzyalex__agent-sessions__small.jsonl"
	fxKiliman      = "kiliman__claude-transcript__test2.jsonl"
	fixtureCount   = 8
	fixtureSession = "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f"
)

// fixtureWants are the real-world transcripts' expectations. The numbers were counted
// independently of this code, by a python script applying the same definitions with the json
// module; the prompts and first prompts were checked by reading the records.
var fixtureWants = []fixtureWant{{
	file:  fxSniffly,
	read:  ReadStats{Lines: 137, Records: 137},
	types: map[Type]int{TypeSummary: 1, TypeUser: 63, TypeAssistant: 73},
	user:  63, assistant: 62, prompts: 5,
	tools: ToolStats{Uses: 59, Results: 58, Errors: 4, Reads: 4, Searches: 1, Shell: 12, Edits: 29, Other: 13,
		LinesAdded: 2627, LinesRemoved: 92, Answered: 58, Unanswered: 1},
	first: "2025-06-08T11:00:11.669Z", last: "2025-06-08T11:56:46.82Z",
	prompt:   "create a jupyter notebook file so that i can test each step of the way",
	mainMsgs: 125, mainRecords: 136, lastUUID: "32a76d26-9a71-40c3-8505-14cf7fede521",
}, {
	file:  fxSnifflySum,
	read:  ReadStats{Lines: 1, Records: 1},
	types: map[Type]int{TypeSummary: 1},
}, {
	file:  fxViewer108,
	read:  ReadStats{Lines: 53, Records: 53},
	types: map[Type]int{TypeUser: 25, TypeAssistant: 28},
	user:  25, assistant: 20, prompts: 1, sidechain: 22, // the prompt: /orchestrator with arguments
	tools: ToolStats{Uses: 21, Results: 21, Errors: 3, Reads: 3, Searches: 3, Shell: 5, Edits: 2, Other: 8,
		LinesAdded: 75, LinesRemoved: 47, Answered: 21},
	first: "2025-09-07T09:52:03.071Z", last: "2025-09-07T09:54:26.499Z",
	prompt:   "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください", // slash command as fallback
	mainMsgs: 25, mainRecords: 31, lastUUID: "e9bd5ce8-d37d-49a1-868c-8281d0d0a32b",
}, {
	file:  fxViewer98,
	read:  ReadStats{Lines: 438, Records: 438},
	types: map[Type]int{TypeSummary: 1, TypeUser: 175, TypeAssistant: 262},
	user:  175, assistant: 170, prompts: 2, sidechain: 405,
	tools: ToolStats{Uses: 167, Results: 167, Errors: 23, Reads: 28, Searches: 2, Shell: 61, Edits: 44, Other: 32,
		LinesAdded: 2445, LinesRemoved: 1030, Answered: 167},
	first: "2025-09-03T00:52:31.217Z", last: "2025-09-03T01:02:03.665Z",
	prompt:   "Thanks! Please update CLAUDE.md for current changes", // beats the earlier slash command
	mainMsgs: 23, mainRecords: 32, lastUUID: "5ac34508-f923-4ac5-8efa-749838e99760",
}, {
	file:  fxAgentParent,
	read:  ReadStats{Lines: 3, Records: 3},
	types: map[Type]int{TypeSystem: 1, TypeUser: 1, TypeAssistant: 1},
	user:  1, assistant: 1, prompts: 1,
	// The Task call has no id and its result lives in the subagent's file.
	tools: ToolStats{Uses: 1, Other: 1, Unanswered: 1},
	first: "2025-12-16T00:00:00Z", last: "2025-12-16T00:00:02Z",
	prompt:   "Delegate a repo search to a subagent",
	mainMsgs: 2, mainRecords: 2, lastUUID: "pa1",
}, {
	file:  fxAgentChild,
	read:  ReadStats{Lines: 4, Records: 4},
	types: map[Type]int{TypeUser: 2, TypeAssistant: 1, TypeAttachment: 1},
	user:  2, assistant: 1, prompts: 0, sidechain: 4, // a subagent's prompt is not human prose
	// An id-less "bash" call answered by an id-less result: paired in order.
	tools: ToolStats{Uses: 1, Results: 1, Shell: 1, Answered: 1},
	first: "2025-12-16T00:00:02.2Z", last: "2025-12-16T00:00:02.5Z",
	prompt: "Search the repo for TODO comments", // sidechain prompts are the last resort
}, {
	file: fxSmall,
	read: ReadStats{Lines: 89, Records: 89, Unknown: 7},
	types: map[Type]int{TypeAgentName: 1, TypeAITitle: 1, TypeAssistant: 10, "atis-latch": 1, TypeAttachment: 38,
		"bridge-session": 1, TypeCustomTitle: 1, TypeFileHistorySnapshot: 1, "frame-link": 1, TypeLastPrompt: 1,
		TypeMode: 1, "permission-mode": 1, TypePRLink: 1, TypeProgress: 1, TypeQueueOperation: 1, "relocated": 1,
		"result": 1, "started": 1, TypeSummary: 1, TypeSystem: 12, TypeUser: 10, TypeWorktreeState: 2},
	// Assistant: 3 id-less records, msg_stage0_1, and the trimmed id split by agentId in two.
	user: 10, assistant: 6, prompts: 5, sidechain: 9, compact: 2, compactSum: 1,
	// a1's id-less bash call is answered by u2; u2b answers it again (an orphan); the
	// trimmed-id call of line 55 is never answered.
	tools: ToolStats{Uses: 3, Results: 3, Errors: 1, Shell: 2, Other: 1, Answered: 2, Unanswered: 1, Orphans: 1},
	first: "2025-12-16T00:00:00Z", last: "2026-04-16T20:10:42.522Z",
	prompt:   "[trimmed for fixture]", // "Hello" is a sidechain record in this file
	mainMsgs: 9, mainRecords: 13, lastUUID: "[trimmed for fixture]",
}, {
	file:  fxKiliman,
	read:  ReadStats{Lines: 507, Records: 507},
	types: map[Type]int{TypeUser: 213, TypeAssistant: 294},
	user:  213, assistant: 192, prompts: 9, sidechain: 172, // incl. a "#" <user-memory-input>
	tools: ToolStats{Uses: 189, Results: 189, Errors: 23, Reads: 42, Searches: 20, Shell: 63, Edits: 38, Other: 26,
		LinesAdded: 1891, LinesRemoved: 177, Answered: 189},
	first: "2025-07-22T18:19:02.172Z", last: "2025-07-23T13:13:28.201Z",
	prompt: "yes, in a previous session we remove the react web app in favor of generating static PNG files. " +
		"Can you update the README to reflect the current state of the app?",
	mainMsgs: 274, mainRecords: 335, lastUUID: "a2395786-1b37-4538-81cf-88774a9841e2",
}}

func TestFixturesCovered(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(realTranscripts(t), "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != fixtureCount || len(fixtureWants) != fixtureCount {
		t.Fatalf("%d fixture files, %d expectations, want %d of each", len(names), len(fixtureWants), fixtureCount)
	}
}

func TestSummarizeFixtures(t *testing.T) {
	dir := realTranscripts(t)
	checkSummaries(t, fixtureWants, func(file string) string { return filepath.Join(dir, file) })
}

func TestMessagesAfterFixtures(t *testing.T) {
	dir := realTranscripts(t)
	checkMessagesAfter(t, fixtureWants, func(file string) string { return filepath.Join(dir, file) })
}
