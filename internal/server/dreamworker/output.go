package dreamworker

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/teammem"
)

// prepare returns the Tree the engine works on. create_new: a new API
// store named after the input, holding a copy of the input's memories
// (written through the one write path), recorded as the dream's output.
// update_existing: the input itself, or, where the creator's writes to it
// are held for review, a MemTree copy (buffer) whose difference propose
// submits at the end as one proposal.
func (e *execution) prepare(ctx context.Context) (tree consolidate.Tree, buffer *consolidate.MemTree, err error) {
	out := e.input
	if e.d.Behavior == teammem.DreamCreateNew {
		if out, err = e.createOutput(ctx); err != nil {
			return nil, nil, err
		}
	} else if e.held() {
		files := make(map[string]string, len(e.entries))
		for _, en := range e.entries {
			files[en.Key] = en.Content
		}
		buffer = consolidate.NewMemTree(files)
		return buffer, buffer, nil
	}
	return &storeTree{st: e.w.store, w: e.w.writer, actor: e.actor, p: e.p, store: out, output: e.d.Behavior == teammem.DreamCreateNew}, nil, nil
}

// held reports whether the creator's writes to the input would be held
// for review (team_writes: review for this principal).
func (e *execution) held() bool {
	call := teammem.WriteCall{Principal: e.p, Repo: e.input.Repo.Slug, Scope: e.input.Space.Scope, Store: &e.input}
	return teammem.WriteHeld(call, e.p.Org.Limits(teammem.DefaultServerDefaults))
}

// maxNameRunes bounds the input's name inside the output store's name.
const maxNameRunes = 160

// outputName names a create_new dream's output store after its input.
func outputName(input teammem.MemoryStore, dreamID string) string {
	name := input.Name
	if name == "" {
		name = input.Repo.Slug
	}
	if utf8.RuneCountInString(name) > maxNameRunes {
		name = string([]rune(name)[:maxNameRunes]) + "…"
	}
	return fmt.Sprintf("%s (dream %s)", name, dreamID)
}

// createOutput creates the output store, records it on the dream and
// copies the input's memories into it in one write.
func (e *execution) createOutput(ctx context.Context) (teammem.MemoryStore, error) {
	out, err := e.w.store.MemoryStoreCreate(ctx, e.d.OrgID, teammem.MemoryStoreCreateParams{Name: outputName(e.input, e.d.ID),
		Description: "Output of dream " + e.d.ID + " of " + e.input.ID(), MaxStores: e.w.cfg.MaxStores})
	if err != nil {
		return out, err
	}
	if _, err := e.w.store.DreamOutputSet(ctx, e.d.OrgID, e.d.ID, teammem.DreamOutputParams{SpaceID: out.Space.ID, StoreUID: out.Space.UID}); err != nil {
		return out, err
	}
	if len(e.entries) == 0 {
		return out, nil
	}
	req := teammem.WriteRequest{Upserts: make([]teammem.Upsert, 0, len(e.entries))}
	for _, en := range e.entries {
		req.Upserts = append(req.Upserts, teammem.Upsert{Key: en.Key, Content: en.Content})
	}
	if _, err := write(ctx, e.w.writer, e.p, out, true, req); err != nil {
		return out, fmt.Errorf("copy the input into the output store: %w", err)
	}
	return out, nil
}

// sources returns the dream's session inputs as read-only sources and the
// sessions the prompt names.
func (e *execution) sources(ctx context.Context) (map[string]string, []consolidate.Session, error) {
	src := map[string]string{}
	var sessions []consolidate.Session
	for _, id := range e.d.SessionIDs {
		text, err := teammem.SessionMaterial(ctx, e.w.store, e.d.OrgID, id)
		if teammem.ErrorCode(err) == teammem.ENotFound {
			continue // nothing of it is left (retention)
		}
		if err != nil {
			return nil, nil, err
		}
		src[consolidate.SessionPath(id)] = text
		sessions = append(sessions, consolidate.Session{ID: id})
	}
	return src, sessions, nil
}

// propose submits the difference between buffer and the input as it was
// read, as ONE write with the read checksums as bases: the write path
// holds it as one proposal (or applies it, when the policy changed).
func (e *execution) propose(ctx context.Context, buffer *consolidate.MemTree) error {
	after := buffer.Files()
	var req teammem.WriteRequest
	for _, en := range e.entries {
		base := en.Checksum
		if c, ok := after[en.Key]; !ok {
			req.Deletes = append(req.Deletes, teammem.Delete{Key: en.Key, Base: &base})
		} else if teammem.EntryChecksum(c) != en.Checksum {
			req.Upserts = append(req.Upserts, teammem.Upsert{Key: en.Key, Content: c, Base: &base})
		}
		delete(after, en.Key)
	}
	for _, k := range slices.Sorted(maps.Keys(after)) {
		none := ""
		req.Upserts = append(req.Upserts, teammem.Upsert{Key: k, Content: after[k], Base: &none})
	}
	if len(req.Upserts)+len(req.Deletes) == 0 {
		return nil
	}
	req.Explicit, req.RefuseSecrets = true, true
	res, err := e.w.writer.WriteDream(ctx, teammem.WriteCall{Principal: e.p, Repo: e.input.Repo.Slug, Scope: e.input.Space.Scope,
		ClientID: "teammem-dream", Store: &e.input, Request: req})
	if err != nil {
		return fmt.Errorf("submit the dream's changes for review: %w", err)
	}
	if res.Held() {
		e.w.log.InfoContext(ctx, "dream held for review", "dream", e.d.ID, "proposal", res.Proposal.ID)
	}
	return nil
}
