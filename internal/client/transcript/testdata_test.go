package transcript

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

// The repository's own transcripts, in testdata/. They are written by hand after the record
// types and cases the real-world fixtures show (fixtures_test.go), so that a fresh clone
// checks every behaviour the real ones do:
//
//   - legacy-inline-subagent: Claude Code 1.0 style. A leading summary, an isMeta caveat,
//     local-command wrappers, a slash command before the real prompt, streamed assistant
//     records sharing a message.id, tool_use/tool_result pairs of every class with
//     toolUseResult, one failing, a Task subagent inlined as isSidechain records, and a "#"
//     memory note followed only by command wrappers.
//   - interrupted: a slash command with arguments as the only prompt, a MultiEdit, and a
//     tool call the user interrupted, never answered.
//   - summary-only: one summary record, nothing else.
//   - v2-record-types: Claude Code 2.1 records. Attachments, thinking and redacted_thinking
//     blocks, titles, an API error and its synthetic assistant message, two
//     compact_boundary records with their isCompactSummary messages, a microcompact
//     boundary, a result whose call was compacted away, a task-notification, a rejected
//     edit, an image prompt and record types this package does not know.
//   - project/: the 2.1 layout, <session>.jsonl plus <session>/subagents/agent-<id>.jsonl
//     and its .meta.json sidecar.
const (
	tdLegacy      = "legacy-inline-subagent.jsonl"
	tdInterrupted = "interrupted.jsonl"
	tdSummaryOnly = "summary-only.jsonl"
	tdV2          = "v2-record-types.jsonl"
	tdSession     = "5d0c2a9e-6b1f-4e3a-8c7d-2f4e6a8b0c1d"
	tdAgent       = "a3c9e1f0b2d4a6c8e"
)

// Paths of the testdata transcripts, relative to the package directory.
var (
	tdParent = filepath.Join("testdata", "project", tdSession+".jsonl")
	tdChild  = filepath.Join("testdata", "project", tdSession, "subagents", "agent-"+tdAgent+".jsonl")
)

// tdPath returns the path of a testdata transcript named in the constants above.
func tdPath(name string) string { return filepath.Join("testdata", "transcripts", name) }

// fixtureWant is what one transcript must summarize to, the same for the repository's files
// and the real-world ones.
type fixtureWant struct {
	file       string
	read       ReadStats
	types      map[Type]int
	user       int // user records
	assistant  int // logical assistant messages (merged by message.id)
	prompts    int
	sidechain  int
	compact    int // compact_boundary records
	micro      int // microcompact_boundary records
	compactSum int // isCompactSummary records
	tools      ToolStats
	first      string // RFC 3339 timestamps, "" for none
	last       string
	prompt     string
	// MessagesAfter(file, ""): merged main-chain messages, their records, the last uuid.
	mainMsgs, mainRecords int
	lastUUID              string
}

// testdataWants are counted by hand from the files, record by record.
var testdataWants = []fixtureWant{{
	file:  tdPath(tdLegacy),
	read:  ReadStats{Lines: 31, Records: 31},
	types: map[Type]int{TypeSummary: 1, TypeUser: 17, TypeAssistant: 13},
	// 13 assistant records, two streamed pairs: 11 messages. Prompts: the request and the
	// "#" note; the caveat is meta, /clear has no arguments, the subagent's prompt is a
	// sidechain record.
	user: 17, assistant: 11, prompts: 2, sidechain: 4,
	// Read, Grep, Task, the subagent's Grep, Edit (+7 -2), Write (+22), Bash (failed), Edit
	// (+1 -1), Bash.
	tools: ToolStats{Uses: 9, Results: 9, Errors: 1, Reads: 1, Searches: 2, Shell: 2, Edits: 3, Other: 1,
		LinesAdded: 30, LinesRemoved: 3, Answered: 9},
	first: "2025-08-20T09:00:00Z", last: "2025-08-20T09:02:10.2Z",
	prompt: "The HTTP client in internal/fetch gives up after one failed request. " +
		"Add retries with exponential backoff, at most 3 attempts.", // beats the earlier /clear
	mainMsgs: 24, mainRecords: 26, lastUUID: "l-u15",
}, {
	file:  tdPath(tdInterrupted),
	read:  ReadStats{Lines: 8, Records: 8},
	types: map[Type]int{TypeUser: 4, TypeAssistant: 4},
	user:  4, assistant: 3, prompts: 1, // the slash command's arguments are prose
	// Bash, MultiEdit (+3 -2 and +2 -1), and the interrupted Bash call.
	tools: ToolStats{Uses: 3, Results: 2, Shell: 2, Edits: 1, LinesAdded: 5, LinesRemoved: 3, Answered: 2, Unanswered: 1},
	first: "2025-09-02T14:30:00Z", last: "2025-09-02T14:30:40Z",
	prompt:   "/review the retry change in internal/fetch", // slash command as the fallback
	mainMsgs: 7, mainRecords: 8, lastUUID: "i-u4",
}, {
	file:  tdPath(tdSummaryOnly),
	read:  ReadStats{Lines: 1, Records: 1},
	types: map[Type]int{TypeSummary: 1},
}, {
	file: tdPath(tdV2),
	read: ReadStats{Lines: 35, Records: 35, Unknown: 2}, // permission-mode, frame-link
	types: map[Type]int{"permission-mode": 1, TypeMode: 1, TypeAttachment: 3, TypeUser: 9, TypeAssistant: 7,
		TypeSystem: 5, TypeFileHistorySnapshot: 1, TypeCustomTitle: 1, TypeAITitle: 1, TypeAgentName: 1,
		TypeLastPrompt: 1, TypeQueueOperation: 1, TypePRLink: 1, TypeWorktreeState: 1, "frame-link": 1},
	// Prompts: the question, the retry request and the image prompt; not the compact
	// summaries, tool results or the task notification.
	user: 9, assistant: 5, prompts: 3, compact: 2, micro: 1, compactSum: 2,
	// Bash, and an Edit (+2 -1) the user rejected; one result answers a call compacted away.
	tools: ToolStats{Uses: 2, Results: 3, Errors: 1, Shell: 1, Edits: 1, LinesAdded: 2, LinesRemoved: 1,
		Answered: 2, Orphans: 1},
	first: "2026-01-12T08:00:00Z", last: "2026-01-12T09:12:00Z", // the last is a frame-link's
	prompt:   "Why does the nightly build fail on arm64?",
	mainMsgs: 14, mainRecords: 16, lastUUID: "v-a5",
}, {
	file:  tdParent,
	read:  ReadStats{Lines: 4, Records: 4},
	types: map[Type]int{TypeUser: 2, TypeAssistant: 2},
	user:  2, assistant: 2, prompts: 1,
	tools: ToolStats{Uses: 1, Results: 1, Other: 1, Answered: 1}, // the Task call
	first: "2026-01-15T10:00:00Z", last: "2026-01-15T10:00:12Z",
	prompt:   "Ask a subagent to list the TODO comments in internal/",
	mainMsgs: 4, mainRecords: 4, lastUUID: "p-a2",
}, {
	file:  tdChild,
	read:  ReadStats{Lines: 5, Records: 5},
	types: map[Type]int{TypeUser: 2, TypeAssistant: 2, TypeAttachment: 1},
	user:  2, assistant: 2, sidechain: 5, // a subagent's prompt is not human prose
	tools: ToolStats{Uses: 1, Results: 1, Searches: 1, Answered: 1},
	first: "2026-01-15T10:00:03.2Z", last: "2026-01-15T10:00:08.1Z",
	prompt: "List every TODO comment under internal/ with its file and line.", // sidechain prompts are the last resort
}}

func TestTestdataCovered(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	names = append(names, tdParent, tdChild)
	var wanted []string
	for _, w := range testdataWants {
		wanted = append(wanted, w.file)
	}
	slices.Sort(names)
	slices.Sort(wanted)
	if !slices.Equal(names, wanted) {
		t.Fatalf("testdata transcripts %q, expectations for %q", names, wanted)
	}
}

func TestSummarizeTestdata(t *testing.T) {
	checkSummaries(t, testdataWants, func(file string) string { return file })
}

func TestMessagesAfterTestdata(t *testing.T) {
	checkMessagesAfter(t, testdataWants, func(file string) string { return file })
}

// checkSummaries checks Summarize against each want, finding files through path.
func checkSummaries(t *testing.T, wants []fixtureWant, path func(string) string) {
	t.Helper()
	for _, want := range wants {
		t.Run(filepath.Base(want.file), func(t *testing.T) {
			t.Parallel()
			got, err := Summarize(path(want.file))
			if err != nil {
				t.Fatal(err)
			}
			if got.Read != want.read {
				t.Errorf("read stats = %+v, want %+v", got.Read, want.read)
			}
			if !maps.Equal(got.Types, want.types) {
				t.Errorf("types = %v, want %v", got.Types, want.types)
			}
			checkInt(t, "records", got.Records, want.read.Records)
			checkInt(t, "user messages", got.UserMessages, want.user)
			checkInt(t, "assistant messages", got.AssistantMessages, want.assistant)
			checkInt(t, "prompts", got.Prompts, want.prompts)
			checkInt(t, "sidechain", got.Sidechain, want.sidechain)
			checkInt(t, "compact boundaries", got.CompactBoundaries, want.compact)
			checkInt(t, "microcompact boundaries", got.MicrocompactBoundaries, want.micro)
			checkInt(t, "compact summaries", got.CompactSummaries, want.compactSum)
			tools := got.Tools
			tools.ByName = nil
			if !reflect.DeepEqual(tools, want.tools) {
				t.Errorf("tools = %+v\nwant    %+v", tools, want.tools)
			}
			checkTime(t, "first timestamp", got.FirstTimestamp, want.first)
			checkTime(t, "last timestamp", got.LastTimestamp, want.last)
			if got.FirstPrompt != want.prompt {
				t.Errorf("first prompt = %q, want %q", got.FirstPrompt, want.prompt)
			}
		})
	}
}

// checkMessagesAfter checks MessagesAfter from the start of each want's file.
func checkMessagesAfter(t *testing.T, wants []fixtureWant, path func(string) string) {
	t.Helper()
	for _, want := range wants {
		t.Run(filepath.Base(want.file), func(t *testing.T) {
			t.Parallel()
			msgs, found, last, err := MessagesAfter(path(want.file), "")
			if err != nil {
				t.Fatal(err)
			}
			records := 0
			for _, m := range msgs {
				records += m.Records
			}
			if found || len(msgs) != want.mainMsgs || records != want.mainRecords || last != want.lastUUID {
				t.Errorf("found %v, %d messages of %d records, last %q; want false, %d of %d, %q",
					found, len(msgs), records, last, want.mainMsgs, want.mainRecords, want.lastUUID)
			}
		})
	}
}

// checkInt reports a mismatching count.
func checkInt(t *testing.T, what string, got, want int) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %d, want %d", what, got, want)
	}
}

// checkTime reports a timestamp differing from the RFC 3339 want ("" = zero time).
func checkTime(t *testing.T, what string, got time.Time, want string) {
	t.Helper()
	if want == "" {
		if !got.IsZero() {
			t.Errorf("%s = %v, want none", what, got)
		}
		return
	}
	w, err := time.Parse(time.RFC3339Nano, want)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(w) {
		t.Errorf("%s = %v, want %v", what, got, w)
	}
}

// mustSize returns the size of the file at path.
func mustSize(tb testing.TB, path string) int64 {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}
