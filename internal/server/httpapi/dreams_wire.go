package httpapi

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// The wire of the Dreams API: the BetaDream object field for field as the
// official SDKs (Go v2.15.0 betadream.go, TypeScript 1.15.0
// resources/beta/dreams.d.ts) decode it, plus teammem's review extension.
// Errors go in Anthropic's envelope (writeStoreError).

// DreamRunner runs dreams; cmd/server implements it with the job queue
// and the server's model (httpapi never links a model SDK).
type DreamRunner interface {
	// Models lists the model ids a request may name; empty means the
	// server has no model configured.
	Models() []string
	// Enqueue asks for d, just created pending, to be run. An error leaves
	// the dream pending, for the runner's own re-enqueue of pending dreams.
	Enqueue(ctx context.Context, d teammem.Dream) error
}

// dreamObject is a dream (type "dream").
type dreamObject struct {
	ID             string              `json:"id"`
	Type           string              `json:"type"`
	Status         teammem.DreamStatus `json:"status"`
	Inputs         []dreamInput        `json:"inputs"`
	Outputs        []dreamStoreRef     `json:"outputs"`
	Model          dreamModel          `json:"model"`
	Instructions   *string             `json:"instructions"`
	OutputBehavior dreamBehavior       `json:"output_behavior"`
	Usage          dreamUsage          `json:"usage"`
	Error          *dreamError         `json:"error"`
	SessionID      *string             `json:"session_id"`
	CreatedAt      time.Time           `json:"created_at"`
	EndedAt        *time.Time          `json:"ended_at"`
	ArchivedAt     *time.Time          `json:"archived_at"`
	// Review is teammem's extension: where a create_new dream's result
	// stands in review.
	Review dreamReview `json:"review"`
}

// dreamInput is one entry of inputs: a memory_store or a sessions input.
type dreamInput struct {
	Type          string   `json:"type"`
	MemoryStoreID string   `json:"memory_store_id,omitempty"`
	SessionIDs    []string `json:"session_ids,omitempty"`
}

// dreamStoreRef is an output: the store holding the result.
type dreamStoreRef struct {
	Type          string `json:"type"` // "memory_store"
	MemoryStoreID string `json:"memory_store_id"`
}

// dreamModel is the model, always as an object.
type dreamModel struct {
	ID    string `json:"id"`
	Speed string `json:"speed"`
}

// dreamBehavior is output_behavior; memory_store_id only for
// update_existing.
type dreamBehavior struct {
	Type          teammem.DreamBehavior `json:"type"`
	MemoryStoreID string                `json:"memory_store_id,omitempty"`
}

// dreamUsage are the four token counts.
type dreamUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// dreamError says why a dream failed.
type dreamError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// dreamReview is the review extension.
type dreamReview struct {
	State teammem.DreamReviewState `json:"state"`
	At    *time.Time               `json:"at"`
}

// dreamPage is a page of dreams, the PageCursor shape.
type dreamPage struct {
	Data     []dreamObject `json:"data"`
	NextPage *string       `json:"next_page"`
}

// dreamOf encodes a dream.
func dreamOf(d teammem.Dream) dreamObject {
	o := dreamObject{ID: d.ID, Type: "dream", Status: d.Status,
		Inputs:  []dreamInput{{Type: "memory_store", MemoryStoreID: d.InputStoreID()}},
		Outputs: []dreamStoreRef{}, Model: dreamModel{ID: d.Model, Speed: d.ModelSpeed},
		OutputBehavior: dreamBehavior{Type: d.Behavior},
		Usage: dreamUsage{InputTokens: d.Usage.InputTokens, OutputTokens: d.Usage.OutputTokens,
			CacheCreationInputTokens: d.Usage.CacheCreationInputTokens, CacheReadInputTokens: d.Usage.CacheReadInputTokens},
		CreatedAt: d.CreatedAt, EndedAt: d.EndedAt, ArchivedAt: d.ArchivedAt,
		Review: dreamReview{State: d.Review.State, At: d.Review.At}}
	if d.SessionIDs != nil {
		o.Inputs = append(o.Inputs, dreamInput{Type: "sessions", SessionIDs: d.SessionIDs})
	}
	if id := d.OutputStoreID(); id != "" {
		o.Outputs = append(o.Outputs, dreamStoreRef{Type: "memory_store", MemoryStoreID: id})
	}
	if o.Model.Speed == "" {
		o.Model.Speed = teammem.DreamSpeedStandard
	}
	if d.Instructions != "" {
		v := d.Instructions
		o.Instructions = &v
	}
	if d.Behavior == teammem.DreamUpdateExisting {
		o.OutputBehavior.MemoryStoreID = d.InputStoreID()
	}
	if d.Status == teammem.DreamFailed {
		o.Error = &dreamError{Type: d.ErrorType, Message: d.ErrorMessage}
	}
	if d.RunSessionID != "" {
		v := d.RunSessionID
		o.SessionID = &v
	}
	if o.Review.State == "" {
		o.Review.State = teammem.ReviewNone
	}
	return o
}

// dreamCursor is the page token after d: its created_at and id, opaque to
// the client.
func dreamCursor(d teammem.Dream) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(d.CreatedAt.UnixMicro(), 10) + "/" + d.ID))
}

// parseDreamCursor reads a page token dreamCursor gave out.
func parseDreamCursor(page string, f *teammem.DreamFilter) error {
	bad := teammem.Errorf(teammem.EInvalid, "page is not a cursor this server gave out")
	raw, err := base64.RawURLEncoding.DecodeString(page)
	if err != nil {
		return bad
	}
	micros, id, ok := strings.Cut(string(raw), "/")
	n, err := strconv.ParseInt(micros, 10, 64)
	if !ok || err != nil || !teammem.ValidDreamID(id) {
		return bad
	}
	f.AfterCreatedAt, f.AfterID = time.UnixMicro(n).UTC(), id
	return nil
}
