package httpapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
)

// heldPrefix begins the result of a write held for review: the tool's own
// success text would say it happened, which it did not yet.
const heldPrefix = "Held for review:"

// write commits req to c's space of scope through s.write with the MCP
// provenance. It refuses a write holding a secret whole (RefuseSecrets: a
// tool has no way to report half a write) and returns "" for a plain
// success, the held text for a write held for review, or a note to append
// to the tool's success text (the MEMORY.md caps).
func (h *mcpHub) write(ctx context.Context, c mcpCall, scope teammem.Scope, req teammem.WriteRequest) (string, error) {
	req.Explicit, req.RefuseSecrets = true, true
	call := teammem.WriteCall{Principal: c.p, Repo: c.repo, Scope: scope, ClientID: c.client, API: apiMCP, Request: req}
	// The SDK runs a call under the context of the request that opened the
	// session: its request values are not this call's (nil *reqContext).
	ctx = context.WithValue(ctx, ctxRequest, (*reqContext)(nil))
	res, err := h.s.write(ctx, call)
	if err != nil {
		return "", err
	}
	if res.Held() {
		return fmt.Sprintf("%s the change was not written yet: it is proposal %d in %s, waiting for an admin to approve it "+
			"(console Review page, or POST /v1/proposals/%d/approve).", heldPrefix, res.Proposal.ID, c.repo, res.Proposal.ID), nil
	}
	for _, up := range req.Upserts {
		if up.Key == teammem.IndexName {
			return indexCapNote(up.Content), nil
		}
	}
	return "", nil
}

// indexCapNote warns when MEMORY.md is past the lines or size an agent
// loads. The write is kept, not refused: the legacy push (teammemory.go)
// and the /v1 routes accept such an index too, and the client truncates it
// when it loads it (TruncateIndex), so refusing here alone would make MCP
// the one dialect that cannot save what the others can.
func indexCapNote(content string) string {
	tr := teammem.TruncateIndex(content)
	if !tr.Truncated() {
		return ""
	}
	return fmt.Sprintf("\n\nWarning: MEMORY.md is now %d lines and %s; agents load only its first %d lines and %s. "+
		"Keep each index entry to one short line and move details into topic files.",
		tr.LineCount, teammem.FormatFileSize(tr.ByteCount), teammem.MaxIndexLines, teammem.FormatFileSize(teammem.MaxIndexBytes))
}

// under returns the live entries at mp: the file itself, or every file of
// the directory it names.
func (h *mcpHub) under(ctx context.Context, c mcpCall, mp memPath) ([]teammem.Entry, error) {
	es, err := h.entries(ctx, c, mp.Scope, true)
	if err != nil {
		return nil, err
	}
	var out []teammem.Entry
	for _, e := range es {
		if e.Key == mp.Key || strings.HasPrefix(e.Key, mp.Key+"/") {
			out = append(out, e)
		}
	}
	return out, nil
}

func (h *mcpHub) delete(ctx context.Context, c mcpCall, a deleteArgs) (string, error) {
	mp, err := parseMemPath(a.Path)
	if err != nil {
		return "", err
	}
	switch {
	case mp.Scope == "":
		return "", fmt.Errorf("Cannot delete the /memories directory itself")
	case mp.Key == "":
		// A whole scope goes by DELETE …/{scope}, an admin's moderation.
		return "", fmt.Errorf("Cannot delete the %s directory itself", mp.Raw)
	}
	es, err := h.under(ctx, c, mp)
	if err != nil {
		return "", err
	}
	if len(es) == 0 {
		return "", fmt.Errorf("The path %s does not exist", mp.Raw)
	}
	var req teammem.WriteRequest
	for _, e := range es {
		base := e.Checksum
		req.Deletes = append(req.Deletes, teammem.Delete{Key: e.Key, Base: &base})
	}
	note, err := h.write(ctx, c, mp.Scope, req)
	if err != nil || note != "" {
		return note, err
	}
	return "Successfully deleted " + mp.Raw, nil
}

// rename moves a file, or every file of a directory, in one version: each
// new key takes the old key's memory id (as the memory stores' rename
// does, memstores_memories.go), so the memory keeps its id and history.
func (h *mcpHub) rename(ctx context.Context, c mcpCall, a renameArgs) (string, error) {
	from, err := parseMemPath(a.OldPath)
	if err != nil {
		return "", err
	}
	to, err := parseMemPath(a.NewPath)
	if err != nil {
		return "", err
	}
	switch {
	case from.Scope == "":
		return "", fmt.Errorf("Cannot rename the /memories directory itself")
	case from.Key == "":
		return "", fmt.Errorf("Cannot rename the %s directory itself", from.Raw)
	case to.Scope == "" || to.Key == "":
		return "", fmt.Errorf("The destination %s already exists", to.Raw)
	case to.Scope != from.Scope:
		// Two spaces, two writes: one could commit without the other.
		return "", fmt.Errorf("Cannot rename across scopes (%s to %s): create the file in the other scope, then delete this one", from.Scope, to.Scope)
	}
	es, err := h.under(ctx, c, from)
	if err != nil {
		return "", err
	}
	if len(es) == 0 {
		return "", fmt.Errorf("The path %s does not exist", from.Raw)
	}
	dest, err := h.under(ctx, c, to)
	if err != nil {
		return "", err
	}
	if len(dest) > 0 {
		return "", fmt.Errorf("The destination %s already exists", to.Raw)
	}
	var req teammem.WriteRequest
	for _, e := range es {
		base := e.Checksum
		key := to.Key + strings.TrimPrefix(e.Key, from.Key)
		req.Upserts = append(req.Upserts, teammem.Upsert{Key: key, Content: e.Content, Base: new(string), MemoryID: e.MemoryID})
		req.Deletes = append(req.Deletes, teammem.Delete{Key: e.Key, Base: &base})
	}
	note, err := h.write(ctx, c, from.Scope, req)
	if teammem.ErrorCode(err) == teammem.EConflict {
		return "", fmt.Errorf("The destination %s already exists", to.Raw)
	}
	if err != nil || strings.HasPrefix(note, heldPrefix) {
		return note, err
	}
	return "Successfully renamed " + from.Raw + " to " + to.Raw + note, nil
}
