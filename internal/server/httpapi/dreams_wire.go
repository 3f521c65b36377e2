package httpapi

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// The Dreams API's encoding: dreams as internal/wire declares them (one set
// of structs for the server and the client), their page cursor, and the
// runner seam. Errors go in Anthropic's envelope (writeStoreError).

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

// dreamOf encodes a dream as the wire declares it (wire.Dream, the
// struct the client decodes too).
func dreamOf(d teammem.Dream) wire.Dream {
	o := wire.Dream{ID: d.ID, Type: "dream", Status: string(d.Status),
		Inputs:  []wire.DreamInput{{Type: wire.DreamInputMemoryStore, MemoryStoreID: d.InputStoreID()}},
		Outputs: []wire.DreamOutput{}, Model: wire.DreamModel{ID: d.Model, Speed: d.ModelSpeed},
		OutputBehavior: wire.DreamOutputBehavior{Type: string(d.Behavior)},
		Usage: wire.DreamUsage{InputTokens: d.Usage.InputTokens, OutputTokens: d.Usage.OutputTokens,
			CacheCreationInputTokens: d.Usage.CacheCreationInputTokens, CacheReadInputTokens: d.Usage.CacheReadInputTokens},
		CreatedAt: d.CreatedAt, EndedAt: d.EndedAt, ArchivedAt: d.ArchivedAt,
		Review: wire.DreamReview{State: string(d.Review.State), At: d.Review.At}}
	if d.SessionIDs != nil {
		o.Inputs = append(o.Inputs, wire.DreamInput{Type: wire.DreamInputSessions, SessionIDs: d.SessionIDs})
	}
	if id := d.OutputStoreID(); id != "" {
		o.Outputs = append(o.Outputs, wire.DreamOutput{Type: wire.DreamInputMemoryStore, MemoryStoreID: id})
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
		o.Error = &wire.DreamError{Type: d.ErrorType, Message: d.ErrorMessage}
	}
	if d.RunSessionID != "" {
		v := d.RunSessionID
		o.SessionID = &v
	}
	if o.Review.State == "" {
		o.Review.State = wire.ReviewNone
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
