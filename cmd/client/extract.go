package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/client/jobs/extract"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/llm"
)

// envExtractEvery sets the extraction throttle: run the model on every N-th
// eligible turn of a session.
const envExtractEvery = "TEAMMEM_EXTRACT_EVERY"

func (a *app) extractCmd() *cobra.Command {
	var session, transcriptPath string
	var settle time.Duration
	cmd := &cobra.Command{
		Use:   "extract",
		Short: "Save memories from the latest messages of a Claude Code session, using your model",
		Long: "extract reads a session's transcript from where the last extraction stopped and lets your model\n" +
			"write what is worth remembering into the memory directory (team/ for what the whole team should\n" +
			"know). It skips, without a model call, when there is nothing new, when the agent already wrote\n" +
			"memory files itself, or when the developer typed nothing; " + envExtractEvery + "=N runs the model only\n" +
			"every N turns. The Stop hook runs it in the background after every turn. A turn during which a\n" +
			"memory file changed by another writer (Claude Code's own extractor, the agent) is skipped; --settle\n" +
			"waits that long for such a writer first. With " + envMemoryMode + "=log (the long-running mode)\n" +
			"memories are appended to today's daily log instead of topic files and MEMORY.md.\n\n" +
			"Needs a model: " + llm.EnvProvider + " (anthropic or openai), " + llm.EnvModel + ", and " + llm.EnvAnthropicKey + "\n" +
			"or " + llm.EnvOpenAIKey + " (or " + llm.EnvBaseURL + " for Ollama, vLLM, llama.cpp). Without one it exits 1\n" +
			"once a model call is due.",
		Example: "  teammem extract --session 5c0375b4-57a5-4f26-b12d-d022ee4e51b7\n" +
			"  teammem extract --transcript ~/.claude/projects/-home-me-src-app/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl --json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if session == "" && transcriptPath == "" {
				return &usageError{errors.New("give --session ID (the transcript is found in the project's transcript directory) or --transcript PATH")}
			}
			if session == "" {
				session = strings.TrimSuffix(filepath.Base(transcriptPath), ".jsonl")
			}
			loc, err := a.location()
			if err != nil {
				return err
			}
			rep, err := a.runExtract(cmd.Context(), loc, session, transcriptPath, settle)
			if a.jsonOut {
				if perr := a.printJSON(rep); perr != nil && err == nil {
					err = perr
				}
				return err
			}
			if err == nil {
				a.printExtract(rep)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "session id (default: the transcript's file name)")
	cmd.Flags().StringVar(&transcriptPath, "transcript", "", "path of the session's JSONL transcript (default: <transcript dir>/<session>.jsonl)")
	cmd.Flags().DurationVar(&settle, "settle", 0, "before the model call, wait up to this long for another writer to save the turn's memories")
	return cmd
}

// runExtract extracts memories from one session into loc's memory directory
// and sends the run's telemetry. An empty transcriptPath means
// <loc.TranscriptDir>/<sessionID>.jsonl. The model comes from the
// TEAMMEM_LLM_* variables; the throttle from TEAMMEM_EXTRACT_EVERY. The
// returned Report is filled in even when the error is not nil.
func (a *app) runExtract(ctx context.Context, loc memdir.Location, sessionID, transcriptPath string, settle time.Duration) (extract.Report, error) {
	rep := extract.Report{SessionID: sessionID, MemoryDir: loc.MemoryDir, Outcome: extract.OutcomeError, Files: []string{}}
	fail := func(err error) (extract.Report, error) {
		rep.Error = err.Error()
		a.extractTelemetry(ctx, rep)
		return rep, err
	}
	transcriptPath, err := sessionTranscript(loc, sessionID, transcriptPath)
	if err != nil {
		return fail(err)
	}
	every, err := extractEvery(a.getenv)
	if err != nil {
		return fail(err)
	}
	stateDir, err := a.localStateDir(loc)
	if err != nil {
		return fail(fmt.Errorf("extraction state directory: %w", err))
	}
	mode := a.memoryMode()
	if mode.Err != nil {
		return fail(mode.Err)
	}
	model, modelErr := a.extractModel()
	rep, err = extract.Run(ctx, extract.Options{
		Location:       loc,
		SessionID:      sessionID,
		TranscriptPath: transcriptPath,
		Model:          model,
		ModelErr:       modelErr,
		Every:          every,
		StateDir:       stateDir,
		Mode:           mode.Mode,
		SettleWait:     settle,
	})
	a.extractTelemetry(ctx, rep)
	return rep, err
}

// sessionTranscript returns the transcript to read: path when given, else
// the session's file in the project's transcript directory.
func sessionTranscript(loc memdir.Location, sessionID, path string) (string, error) {
	if path != "" {
		return filepath.Abs(path)
	}
	if sessionID == "" || sessionID != filepath.Base(sessionID) || strings.HasPrefix(sessionID, ".") {
		return "", &usageError{fmt.Errorf("session id %q cannot name a transcript file; pass --transcript", sessionID)}
	}
	path = filepath.Join(loc.TranscriptDir, sessionID+".jsonl")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no transcript for session %s at %s; pass --transcript PATH", sessionID, path)
	}
	return path, nil
}

// extractEvery reads TEAMMEM_EXTRACT_EVERY; unset means every turn.
func extractEvery(getenv func(string) string) (int, error) {
	v := strings.TrimSpace(getenv(envExtractEvery))
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a whole number, 1 or more", envExtractEvery, v)
	}
	return n, nil
}

// extractModel builds the model the TEAMMEM_LLM_* variables configure; the
// error wraps llm.ErrNotConfigured when none is.
func (a *app) extractModel() (llm.Model, error) {
	cfg, err := llm.ConfigFromEnv(a.getenv)
	if err != nil {
		return nil, err
	}
	return llm.New(cfg)
}

// extractTelemetry sends teammem_extract_run, and teammem_extract_skipped
// for a skip (see engineTelemetry).
func (a *app) extractTelemetry(ctx context.Context, rep extract.Report) {
	a.engineTelemetry(ctx, "teammem_extract", map[string]any{"outcome": rep.Outcome, "memories_saved": rep.MemoriesSaved}, rep.SkipReason)
}

// engineTelemetry sends a memory-engine run as <prefix>_run, with its skip
// reason, and a skip also as <prefix>_skipped, when telemetry is on and a
// server is configured; otherwise, or when sending fails, nothing happens.
func (a *app) engineTelemetry(ctx context.Context, prefix string, run map[string]any, skipReason string) {
	tel := a.newTelemetry(nil)
	if tel == nil {
		return
	}
	server, key, err := a.credentials()
	if err != nil {
		return
	}
	tel.client = &apiclient.Client{BaseURL: server, Key: key, UserAgent: "teammem-client", HTTP: &http.Client{Timeout: 10 * time.Second}}
	if skipReason != "" {
		run["skip_reason"] = skipReason
		tel.add(prefix+"_skipped", map[string]any{"reason": skipReason})
	}
	tel.add(prefix+"_run", run)
	tel.flush(context.WithoutCancel(ctx))
}

// printExtract prints a successful or skipped run for people.
func (a *app) printExtract(rep extract.Report) {
	switch {
	case rep.Outcome == extract.OutcomeSkipped:
		fmt.Fprintf(a.stdout, "Nothing saved: %s\n", skipText(rep))
	case len(rep.Files) == 0:
		fmt.Fprintf(a.stdout, "Nothing saved: the model found nothing worth remembering in %d new messages\n", rep.Messages)
	default:
		noun := "memories"
		if rep.MemoriesSaved == 1 {
			noun = "memory"
		}
		team := ""
		if rep.TeamSaved > 0 {
			team = fmt.Sprintf(" (%d in team/)", rep.TeamSaved)
		}
		fmt.Fprintf(a.stdout, "Saved %d %s%s\n", rep.MemoriesSaved, noun, team)
		for _, f := range rep.Files {
			fmt.Fprintf(a.stdout, "  %s\n", filepath.Join(rep.MemoryDir, filepath.FromSlash(f)))
		}
	}
	for _, d := range rep.Denied {
		fmt.Fprintf(a.stderr, "refused: %s\n", d)
	}
	if rep.HitTurnLimit {
		fmt.Fprintf(a.stderr, "note: the model used all %d turns; the next extraction continues from here\n", rep.Turns)
	}
}

// skipText explains a skip reason.
func skipText(rep extract.Report) string {
	switch rep.SkipReason {
	case extract.SkipNoMessages:
		return "no new messages since the last extraction"
	case extract.SkipDirectWrite:
		return "the agent already wrote memory files in these messages"
	case extract.SkipMemoryChanged:
		return "a memory file changed during the turn (Claude Code's own extraction or the agent saved it)"
	case extract.SkipNoProse:
		return "nothing typed by the developer in the new messages"
	case extract.SkipThrottled:
		return fmt.Sprintf("throttled: %d of %d turns (%s)", rep.TurnsSince, rep.Every, envExtractEvery)
	case extract.SkipCoalesced:
		return "another extraction of this session is running; it or the next one covers these messages"
	}
	return rep.SkipReason
}
