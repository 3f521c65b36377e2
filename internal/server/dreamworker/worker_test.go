package dreamworker_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

var (
	before = llmtest.ConsolidationBefore
	after  = llmtest.ConsolidationAfter
)

// turnUsage is what every scripted reply spends.
var turnUsage = llm.Usage{InputTokens: 120, OutputTokens: 30, CacheReadTokens: 400, CacheCreationTokens: 10}

// turn is a scripted reply that spends turnUsage.
func turn(r llmtest.Reply) llmtest.Reply {
	r.Response.Usage = turnUsage
	return r
}

// consolidation is the script of the scripted consolidation.
func consolidation() []llmtest.Reply { return llmtest.ConsolidationScript(turnUsage) }

// TestConsolidation runs the scripted consolidation through the job queue
// to completed, on both drivers and both output behaviours: the output
// holds the consolidated memories, a create_new input is untouched, and
// the usage is the sum of the model's answers.
func TestConsolidation(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		script := llmtest.NewScript(consolidation()...)
		b := setup(t, st, script, nil)
		input := b.inputStore(before)
		d := b.waitReleased(b.dream(input, teammem.DreamCreateNew).ID)
		if d.Status != teammem.DreamCompleted || d.ErrorType != "" || d.Review.State != teammem.ReviewPending {
			t.Fatalf("dream %s %s %s, review %s", d.Status, d.ErrorType, d.ErrorMessage, d.Review.State)
		}
		want := teammem.DreamUsage{InputTokens: 7 * 120, OutputTokens: 7 * 30, CacheReadInputTokens: 7 * 400, CacheCreationInputTokens: 7 * 10}
		if d.Usage != want {
			t.Fatalf("usage %+v, want %+v", d.Usage, want)
		}
		if d.OutputSpaceID == 0 || d.OutputSpaceID == input.Space.ID || len(d.Base) != len(before) {
			t.Fatalf("output %d, base %v", d.OutputSpaceID, d.Base)
		}
		if got := b.files(d.OutputSpaceID); !maps.Equal(got, after) {
			t.Fatalf("output %v", got)
		}
		if got := b.files(input.Space.ID); !maps.Equal(got, before) {
			t.Fatalf("input changed: %v", got)
		}
		hist, err := st.EntryHistory(t.Context(), b.org.ID, d.OutputSpaceID, "team/db.md")
		if err != nil || len(hist) != 2 || hist[0].API != "dream" || hist[0].AuthorID != b.user.ID || hist[0].KeyID != b.key.ID {
			t.Fatalf("provenance of the dream's write: %v %+v", err, hist)
		}
		out, err := st.MemoryStoreGet(t.Context(), b.org.ID, d.OutputStoreUID)
		if err != nil || out.Name != "notes (dream "+d.ID+")" {
			t.Fatalf("output store %q: %v", out.Name, err)
		}
		if r := script.Requests()[0]; r.System != consolidate.StoreSystem || !strings.Contains(r.Messages[0].Content[0].Text, "Memory store: notes") {
			t.Fatalf("not the store prompt: %.300s", r.Messages[0].Content[0].Text)
		}

		// update_existing writes into the input itself.
		script.Add(consolidation()...)
		u := b.waitReleased(b.dream(input, teammem.DreamUpdateExisting).ID)
		if u.Status != teammem.DreamCompleted || u.OutputSpaceID != input.Space.ID || u.Review.State != teammem.ReviewNone {
			t.Fatalf("update_existing %s %s %s, output %d, review %s", u.Status, u.ErrorType, u.ErrorMessage, u.OutputSpaceID, u.Review.State)
		}
		if got := b.files(input.Space.ID); !maps.Equal(got, after) {
			t.Fatalf("input after update_existing: %v", got)
		}
	})
}
