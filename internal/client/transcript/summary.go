package transcript

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Bounds on the accumulator's maps, so that a hostile or corrupt file cannot grow them
// without limit. Past them counts are still totalled, only not broken down.
const (
	maxTypeNames   = 256     // distinct keys of Summary.Types and ToolStats.ByName
	maxPendingUses = 1 << 16 // tool_use ids awaiting their tool_result
)

// Summary describes one transcript. All counts cover the whole file, sidechain records
// included, unless a field says otherwise.
type Summary struct {
	// Read holds the Reader's line counts; zero when the Stats was fed by hand.
	Read ReadStats
	// Records counts the records added.
	Records int
	// Types counts records per type, unknown types included (up to 256 distinct types).
	Types map[Type]int
	// UserMessages counts user records, tool results and meta messages included.
	UserMessages int
	// AssistantMessages counts logical assistant messages: streamed records sharing a
	// message.id count once (see Merger).
	AssistantMessages int
	// Prompts counts main-chain user messages with human prose (see HasProse).
	Prompts int
	// Sidechain counts records with isSidechain true.
	Sidechain int
	// CompactBoundaries and MicrocompactBoundaries count the system boundary records.
	CompactBoundaries      int
	MicrocompactBoundaries int
	// CompactSummaries counts user records with isCompactSummary.
	CompactSummaries int
	// Tools summarizes tool calls.
	Tools ToolStats
	// FirstTimestamp and LastTimestamp are the earliest and latest valid timestamps.
	FirstTimestamp, LastTimestamp time.Time
	// FirstPrompt is the listing title per reference §9.6: the first user text that is not
	// a tool result, meta or compact summary, slash commands only as a fallback, whitespace
	// collapsed, cut at 200 UTF-16 units plus "…". Main-chain prompts win over sidechain ones.
	FirstPrompt string
}

// ToolStats summarizes the tool_use and tool_result blocks of a transcript.
type ToolStats struct {
	// Uses counts tool_use blocks; Results counts tool_result blocks, Errors those with
	// is_error.
	Uses, Results, Errors int
	// Uses broken down by ClassifyTool.
	Reads, Searches, Shell, Edits, Other int
	// LinesAdded and LinesRemoved total EditLines over all edit tool calls, whatever their
	// outcome.
	LinesAdded, LinesRemoved int
	// Answered counts tool uses that got a tool_result; Unanswered those still waiting at
	// the end (interrupted sessions leave some); Orphans counts tool results matching no
	// waiting use. Pairing is by id; blocks without an id pair in order of appearance.
	Answered, Unanswered, Orphans int
	// ByName counts uses per tool name (up to 256 distinct names).
	ByName map[string]int
}

// Stats accumulates a Summary record by record, in file order. The zero Stats is ready to
// use.
type Stats struct {
	sum       Summary
	merger    Merger
	prompt    firstPrompt
	pending   map[string]bool // tool_use ids awaiting a result
	pendingNo int             // tool uses without an id awaiting a result
	untracked int             // tool uses past maxPendingUses, counted unanswered
}

// NewStats returns an empty accumulator.
func NewStats() *Stats { return new(Stats) }

// Add accounts for one record.
func (s *Stats) Add(rec *Record) {
	if s.pending == nil {
		s.sum.Types, s.sum.Tools.ByName, s.pending = map[Type]int{}, map[string]int{}, map[string]bool{}
	}
	sum := &s.sum
	sum.Records++
	if _, ok := sum.Types[rec.Type]; ok || len(sum.Types) < maxTypeNames {
		sum.Types[rec.Type]++
	}
	if rec.IsSidechain {
		sum.Sidechain++
	}
	s.addTime(rec.Timestamp)
	switch rec.Type {
	case TypeUser:
		sum.UserMessages++
		if rec.IsCompactSummary {
			sum.CompactSummaries++
		}
		if !rec.IsSidechain && isProseRecord(rec) {
			sum.Prompts++
		}
	case TypeAssistant:
		if _, continued := s.merger.Group(rec); !continued {
			sum.AssistantMessages++
		}
	case TypeSystem:
		switch rec.Subtype {
		case SubtypeCompactBoundary:
			sum.CompactBoundaries++
		case SubtypeMicrocompactBoundary:
			sum.MicrocompactBoundaries++
		}
	}
	s.prompt.add(rec)
	for i := range rec.Content {
		s.addBlock(&rec.Content[i])
	}
}

// addTime widens the timestamp range.
func (s *Stats) addTime(t time.Time) {
	if t.IsZero() {
		return
	}
	if s.sum.FirstTimestamp.IsZero() || t.Before(s.sum.FirstTimestamp) {
		s.sum.FirstTimestamp = t
	}
	if t.After(s.sum.LastTimestamp) {
		s.sum.LastTimestamp = t
	}
}

// addBlock accounts for a tool_use or tool_result block.
func (s *Stats) addBlock(b *Block) {
	t := &s.sum.Tools
	switch b.Kind {
	case BlockToolUse:
		t.Uses++
		if _, ok := t.ByName[b.Name]; ok || len(t.ByName) < maxTypeNames {
			t.ByName[b.Name]++
		}
		s.addClass(b)
		switch {
		case b.ID == "":
			s.pendingNo++
		case len(s.pending) >= maxPendingUses:
			s.untracked++
		default:
			s.pending[b.ID] = true
		}
	case BlockToolResult:
		t.Results++
		if b.IsError {
			t.Errors++
		}
		switch {
		case b.ToolUseID == "" && s.pendingNo > 0:
			s.pendingNo--
			t.Answered++
		case b.ToolUseID != "" && s.pending[b.ToolUseID]:
			delete(s.pending, b.ToolUseID)
			t.Answered++
		default:
			t.Orphans++
		}
	}
}

// addClass counts a tool use in its class and, for edits, its changed lines.
func (s *Stats) addClass(b *Block) {
	t := &s.sum.Tools
	switch ClassifyTool(b.Name) {
	case ClassRead:
		t.Reads++
	case ClassSearch:
		t.Searches++
	case ClassShell:
		t.Shell++
	case ClassEdit:
		t.Edits++
		added, removed := EditLines(b.Name, b.Input)
		t.LinesAdded += added
		t.LinesRemoved += removed
	default:
		t.Other++
	}
}

// Summary returns the summary of the records added so far. The maps are shared with the
// accumulator; copy them before adding more records if the snapshot must not change.
func (s *Stats) Summary() Summary {
	sum := s.sum
	sum.Tools.Unanswered = len(s.pending) + s.pendingNo + s.untracked
	sum.FirstPrompt = s.prompt.result()
	return sum
}

// SummarizeReader reads a whole transcript from r and summarizes it.
func SummarizeReader(r io.Reader) (Summary, error) {
	return summarize(NewReader(r))
}

// Summarize reads the transcript at path and summarizes it.
func Summarize(path string) (Summary, error) {
	rd, err := Open(path)
	if err != nil {
		return Summary{}, err
	}
	defer rd.Close()
	sum, err := summarize(rd)
	if err != nil {
		return Summary{}, fmt.Errorf("summarize %s: %w", path, err)
	}
	return sum, nil
}

// summarize drains rd into a Stats.
func summarize(rd *Reader) (Summary, error) {
	st := NewStats()
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Summary{}, err
		}
		st.Add(&rec)
	}
	sum := st.Summary()
	sum.Read = rd.Stats()
	return sum, nil
}
