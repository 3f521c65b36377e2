package dreamworker

import (
	"context"
	"fmt"

	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/teammem"
)

// Writer is the one write path as the worker uses it:
// httpapi.Server.WriteDream (the Writer plus the server's metrics, audit
// and caches around it).
type Writer interface {
	WriteDream(ctx context.Context, call teammem.WriteCall) (teammem.WriteResult, error)
}

// storeTree is a consolidate.Tree over a memory store: it reads the
// store's live entries and writes and deletes through the one write path,
// as the dream's creator, so that secret and poisoning checks refuse what
// they refuse for any other writer. A refusal is returned as an error
// whose text the model reads: the write path's message, which never holds
// a secret.
type storeTree struct {
	st teammem.Store
	w  Writer
	// actor re-checks the creator before each write and returns its
	// principal as it is now (execution.actor).
	actor func(context.Context) (teammem.Principal, error)
	p     teammem.Principal // for reads
	store teammem.MemoryStore
	// output marks a create_new dream's own output store (WriteCall.DreamOutput).
	output bool
}

var _ consolidate.Tree = (*storeTree)(nil)

// List implements consolidate.Tree.
func (t *storeTree) List(ctx context.Context) ([]consolidate.File, error) {
	es, err := t.st.EntriesList(ctx, t.p.Org.ID, t.store.Space.ID, false)
	if err != nil {
		return nil, err
	}
	out := make([]consolidate.File, 0, len(es))
	for _, e := range es {
		out = append(out, consolidate.File{Path: e.Key, Size: e.Size})
	}
	return out, nil
}

// Read implements consolidate.Tree.
func (t *storeTree) Read(ctx context.Context, path string) (string, error) {
	e, err := t.st.EntryGet(ctx, t.p.Org.ID, t.store.Space.ID, path)
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return "", fmt.Errorf("%s: %w", path, consolidate.ErrNotFound)
	}
	return e.Content, err
}

// Write implements consolidate.Tree: one upsert, refused whole when it
// holds a secret.
func (t *storeTree) Write(ctx context.Context, path, content string) error {
	return t.commit(ctx, teammem.WriteRequest{Upserts: []teammem.Upsert{{Key: path, Content: content}}})
}

// Delete implements consolidate.Tree.
func (t *storeTree) Delete(ctx context.Context, path string) error {
	if _, err := t.Read(ctx, path); err != nil {
		return err
	}
	return t.commit(ctx, teammem.WriteRequest{Deletes: []teammem.Delete{{Key: path}}})
}

// commit writes req to the store as the dream's creator, re-checked
// first: a creator who may no longer act stops the run, nothing written. A write held for
// review (the store's policy changed under a direct run) or one whose
// secrets were skipped is a refusal too: nothing the model meant landed.
func (t *storeTree) commit(ctx context.Context, req teammem.WriteRequest) error {
	p, err := t.actor(ctx)
	if err != nil {
		return err
	}
	_, err = write(ctx, t.w, p, t.store, t.output, req)
	return err
}

// write commits req to store through w as p, with the rules of the
// memory stores dialect (explicit writes, secrets refused whole; output:
// store is a create_new dream's output), and
// turns a held or secret-skipping outcome into an error.
func write(ctx context.Context, w Writer, p teammem.Principal, store teammem.MemoryStore, output bool, req teammem.WriteRequest) (teammem.WriteResult, error) {
	req.Explicit, req.RefuseSecrets = true, true
	res, err := w.WriteDream(ctx, teammem.WriteCall{Principal: p, Repo: store.Repo.Slug, Scope: store.Space.Scope,
		ClientID: "teammem-dream", Store: &store, Request: req, DreamOutput: output})
	switch {
	case err != nil:
		return res, fmt.Errorf("refused: %s", teammem.ErrorMessage(err))
	case res.Held():
		return res, fmt.Errorf("refused: the write was held for review as proposal %d; nothing was written", res.Proposal.ID)
	case len(res.SkippedSecrets) > 0:
		return res, fmt.Errorf("refused: %s", teammem.MsgContentSecret)
	}
	return res, nil
}
