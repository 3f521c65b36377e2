package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// proposalColumns are a proposal's columns with its author's and decider's
// handles; changesCol is "p.changes" or, for lists, an expression without
// the content.
func proposalColumns(changesCol string) string {
	return `p.id, p.repo, p.scope, coalesce(p.author_id, 0), coalesce(u.handle, ''), p.client_id, p.api, p.key_id, p.session_id, p.status, p.reason, ` +
		changesCol + `, p.findings, p.created_at, p.decided_at, coalesce((SELECT d.handle FROM users d WHERE d.id = p.decided_by), ''), p.note
		FROM proposals p LEFT JOIN users u ON u.id = p.author_id`
}

func scanProposal(row pgx.Row) (teammem.Proposal, error) {
	var p teammem.Proposal
	var scope, status, changes, findings string
	var decided *time.Time
	if err := row.Scan(&p.ID, &p.Repo, &scope, &p.AuthorID, &p.Author, &p.ClientID, &p.API, &p.KeyID, &p.SessionID, &status, &p.Reason,
		&changes, &findings, &p.CreatedAt, &decided, &p.DecidedBy, &p.Note); err != nil {
		return p, interpret(err)
	}
	p.Scope, p.Status, p.DecidedAt = teammem.Scope(scope), teammem.ProposalStatus(status), decided
	if decided != nil {
		t := decided.UTC()
		p.DecidedAt = &t
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return p, teammem.DecodeProposalColumns(&p, changes, findings)
}

// ProposalCreate stores a pending proposal.
func (db *DB) ProposalCreate(ctx context.Context, orgID int64, p teammem.Proposal) (teammem.Proposal, error) {
	changes, err := teammem.EncodeProposalChanges(p.Changes)
	if err != nil {
		return p, err
	}
	var id int64
	err = db.pool.QueryRow(ctx, `INSERT INTO proposals (org_id, repo, scope, author_id, client_id, api, key_id, session_id, status, reason, changes, findings, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10, $11, $12) RETURNING id`, orgID, p.Repo, string(p.Scope),
		nullID(p.AuthorID), p.ClientID, p.API, p.KeyID, p.SessionID, p.Reason, changes, teammem.EncodeFindings(p.Findings), now()).Scan(&id)
	if err != nil {
		return p, interpret(err)
	}
	return db.ProposalGet(ctx, orgID, id)
}

// ProposalGet returns one proposal of the org.
func (db *DB) ProposalGet(ctx context.Context, orgID, id int64) (teammem.Proposal, error) {
	return proposalGet(ctx, db.pool, orgID, id)
}

type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func proposalGet(ctx context.Context, q queryRower, orgID, id int64) (teammem.Proposal, error) {
	p, err := scanProposal(q.QueryRow(ctx, `SELECT `+proposalColumns("p.changes")+` WHERE p.org_id = $1 AND p.id = $2`, orgID, id))
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return p, teammem.Errorf(teammem.ENotFound, "proposal %d not found", id)
	}
	return p, err
}

// ProposalList pages an org's proposals, newest first, without content:
// each change keeps its key, op and base.
func (db *DB) ProposalList(ctx context.Context, orgID int64, f teammem.ProposalFilter) ([]teammem.Proposal, error) {
	f.Limit = teammem.ListLimit(f.Limit)
	rows, err := db.pool.Query(ctx, `SELECT `+proposalColumns(`coalesce((SELECT jsonb_agg(c - 'content' ORDER BY n) FROM jsonb_array_elements(p.changes::jsonb) WITH ORDINALITY AS e(c, n)), '[]'::jsonb)::text`)+`
		WHERE p.org_id = $1 AND ($2 = '' OR p.status = $2) AND ($3 = 0 OR p.author_id = $3) AND ($4 = '' OR p.repo = $4) AND ($5 = 0 OR p.id < $5)
		ORDER BY p.id DESC LIMIT $6`, orgID, string(f.Status), f.AuthorID, f.Repo, f.BeforeID, f.Limit)
	return collect(rows, err, scanProposal)
}

// ProposalDecide moves a pending proposal to its decision.
func (db *DB) ProposalDecide(ctx context.Context, orgID, id int64, d teammem.ProposalDecideParams) (teammem.Proposal, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE proposals SET status = $1, decided_at = $2, decided_by = $3, note = $4
		WHERE org_id = $5 AND id = $6 AND status = 'pending'`, string(d.Status), d.At, nullID(d.By), d.Note, orgID, id)
	if err != nil {
		return teammem.Proposal{}, interpret(err)
	}
	p, err := db.ProposalGet(ctx, orgID, id)
	if err == nil && tag.RowsAffected() == 0 {
		return p, teammem.Errorf(teammem.EConflict, "proposal %d was %s already", id, p.Status)
	}
	return p, err
}

// proposalsOfSpaceSQL lists, locking them, the proposals of a space (the
// org's proposals of its repo and scope; for a personal space, its
// owner's) whose stored changes match a LIKE pattern
// (teammem.ProposalErasure.LikePattern).
const proposalsOfSpaceSQL = `SELECT p.id, p.changes, p.findings FROM proposals p
	JOIN spaces s ON s.org_id = p.org_id AND s.id = $1 JOIN repos r ON r.id = s.repo_id
	WHERE p.org_id = $2 AND p.repo = r.slug AND p.scope = s.scope AND (s.scope = 'team' OR p.author_id = s.user_id)
		AND p.changes LIKE $3 ESCAPE '\'
	ORDER BY p.id FOR UPDATE OF p`

// proposalsErase removes from the proposals of a space the content e
// matches (teammem.EraseProposal), in the caller's transaction, and returns
// how many proposals it changed.
func proposalsErase(ctx context.Context, tx pgx.Tx, orgID, spaceID int64, e teammem.ProposalErasure) (int, error) {
	rows, err := tx.Query(ctx, proposalsOfSpaceSQL, spaceID, orgID, e.LikePattern())
	found, err := collect(rows, err, func(row pgx.Row) (teammem.Proposal, error) {
		var p teammem.Proposal
		var changes, findings string
		if err := row.Scan(&p.ID, &changes, &findings); err != nil {
			return p, err
		}
		return p, teammem.DecodeProposalColumns(&p, changes, findings)
	})
	if err != nil {
		return 0, fmt.Errorf("find proposals to erase: %w", err)
	}
	return teammem.EraseProposals(found, e, func(p teammem.Proposal, changes string) error {
		_, err := tx.Exec(ctx, `UPDATE proposals SET changes = $3, findings = $4 WHERE org_id = $1 AND id = $2`,
			orgID, p.ID, changes, teammem.EncodeFindings(p.Findings))
		return interpret(err)
	})
}
