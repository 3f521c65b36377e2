package extract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/client/jobs/agent"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/llm"
)

// Memory modes of Options.Mode.
const (
	// ModeTopics maintains topic files and the MEMORY.md indexes.
	ModeTopics = "topics"
	// ModeLog is the long-running mode (reference §2.11): what would have
	// been saved is appended, one list item each, to the day's log
	// logs/YYYY/MM/YYYY-MM-DD.md, the file `teammem log` writes; topic files
	// and MEMORY.md are left to the nightly dream.
	ModeLog = "log"
)

// LogTool is the only writing tool of the long-running mode.
const LogTool = "log"

// readTools are the sandbox tools the long-running mode keeps.
var readTools = []string{"list", "read", "grep", "glob"}

// logBox lets the model look at the memory directory through the sandbox
// and append entries to today's daily log; every other write is refused.
type logBox struct {
	sb   *agent.Sandbox
	root string
	now  func() time.Time

	mu      sync.Mutex
	entries int
	key     string
	denied  []string
}

var _ consolidate.Toolbox = (*logBox)(nil)

// Tools returns the read tools and log.
func (b *logBox) Tools() []llm.Tool {
	var out []llm.Tool
	for _, t := range b.sb.Tools() {
		if slices.Contains(readTools, t.Name) {
			out = append(out, t)
		}
	}
	return append(out, llm.Tool{Name: LogTool,
		Description: "Append one memory to today's daily log (logs/YYYY/MM/YYYY-MM-DD.md) as a timestamped list item.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"type":{"type":"string","enum":["user","feedback","project","reference"]},` +
			`"text":{"type":"string","description":"the memory, self-contained, in one short paragraph"}},"required":["type","text"]}`)})
}

// Call answers one tool call.
func (b *logBox) Call(name string, raw json.RawMessage) (string, bool) {
	if slices.Contains(readTools, name) {
		return b.sb.Call(name, raw)
	}
	if name != LogTool {
		return b.deny("there is no tool %q in the long-running mode: memories go to the daily log with %s; "+
			"topic files and MEMORY.md are left to the nightly consolidation", name, LogTool), true
	}
	var in struct{ Type, Text string }
	if err := json.Unmarshal(raw, &in); err != nil || strings.TrimSpace(in.Text) == "" {
		return "log needs a non-empty text (and a type: user, feedback, project or reference)", true
	}
	entry := strings.TrimSpace(in.Text)
	if t := strings.TrimSpace(in.Type); t != "" {
		entry = "[" + t + "] " + entry
	}
	key, err := memdir.AppendLog(b.root, b.now(), entry)
	if err != nil {
		return b.deny("cannot append to the daily log: %v", err), true
	}
	b.mu.Lock()
	b.entries++
	b.key = key
	b.mu.Unlock()
	return "appended to " + key, false
}

func (b *logBox) deny(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	b.mu.Lock()
	b.denied = append(b.denied, msg)
	b.mu.Unlock()
	return msg
}

// Touched returns the daily log's key once an entry was appended.
func (b *logBox) Touched() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.entries == 0 {
		return nil
	}
	return []string{b.key}
}

// Denied returns the sandbox's refusals and the box's own.
func (b *logBox) Denied() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append(b.sb.Denied(), b.denied...)
}

// logSystemPrompt is the long-running mode's system prompt: the same job,
// kinds of memory and exclusions, with the daily log as the only output.
func logSystemPrompt(p promptParams) string {
	var b strings.Builder
	b.WriteString(promptLogRole)
	fmt.Fprintf(&b, promptLogTools, p.maxTurns)
	b.WriteString(promptTypes)
	b.WriteString(promptExclusions)
	b.WriteString(promptLogSaving)
	return b.String()
}

const promptLogRole = `You keep the long-term memory of a coding agent that works in a long-running mode. The agent starts
every session knowing nothing about earlier ones except what is stored in its memory directory. In this mode
nothing is filed into topic files as it happens: what is worth remembering is written down in a daily log,
and a nightly consolidation turns the logs into organised memories. You are shown the latest part of a
conversation between a developer and the agent. Your job is to notice what in it will still matter in future
sessions, and to log exactly that: who the developer is, how they want the agent to work, what is going on in
the project that the code does not show, and where to find things.

When the developer explicitly asked the agent to remember something, log it. When they asked it to forget
something, log that request, saying precisely what is to be forgotten.
`

const promptLogTools = `
## Tools and budget

list, read, grep and glob look at the memory directory (paths relative to it), so you can see what is
already stored and in today's log. log appends one memory to today's log. Nothing else can be written: no
topic file, no MEMORY.md, no shell.

You have at most %d turns: look first if you need to, then log everything in one turn.
`

const promptLogSaving = `
## How to log a memory

Call log once per memory, with its type and a self-contained text: someone reading only that line in a month
must understand it. For feedback and project memories, say the rule or fact, then why, then how to apply it,
in the same text. Write dates as absolute dates. Before logging, check that today's log or a stored memory
does not already say the same thing; log a correction when a stored memory turned out to be wrong.
`
