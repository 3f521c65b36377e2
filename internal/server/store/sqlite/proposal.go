package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/teammem/teammem/internal/teammem"
)

// proposalColumns are a proposal's columns with its author's and decider's
// handles; changesCol is "p.changes" or, for lists, "'[]'".
func proposalColumns(changesCol string) string {
	return `p.id, p.repo, p.scope, coalesce(p.author_id, 0), coalesce(u.handle, ''), p.client_id, p.api, p.key_id, p.session_id, p.status, p.reason, ` +
		changesCol + `, p.findings, p.created_at, p.decided_at, coalesce((SELECT d.handle FROM users d WHERE d.id = p.decided_by), ''), p.note
		FROM proposals p LEFT JOIN users u ON u.id = p.author_id`
}

func scanProposal(row rowScanner) (teammem.Proposal, error) {
	var p teammem.Proposal
	var changes, findings string
	var created int64
	var decided sql.NullInt64
	if err := row.Scan(&p.ID, &p.Repo, &p.Scope, &p.AuthorID, &p.Author, &p.ClientID, &p.API, &p.KeyID, &p.SessionID, &p.Status, &p.Reason,
		&changes, &findings, &created, &decided, &p.DecidedBy, &p.Note); err != nil {
		return p, interpret(err)
	}
	p.CreatedAt, p.DecidedAt = fromMicros(created), ptrFromMicros(decided)
	return p, teammem.DecodeProposalColumns(&p, changes, findings)
}

// ProposalCreate stores a pending proposal.
func (db *DB) ProposalCreate(ctx context.Context, orgID int64, p teammem.Proposal) (teammem.Proposal, error) {
	changes, err := teammem.EncodeProposalChanges(p.Changes)
	if err != nil {
		return p, err
	}
	var id int64
	err = db.writing(ctx, orgID, func() error {
		return db.w.QueryRowContext(ctx, `INSERT INTO proposals (org_id, repo, scope, author_id, client_id, api, key_id, session_id, status, reason, changes, findings, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?) RETURNING id`, orgID, p.Repo, string(p.Scope),
			sql.NullInt64{Int64: p.AuthorID, Valid: p.AuthorID != 0}, p.ClientID, p.API, p.KeyID, p.SessionID, p.Reason, changes,
			teammem.EncodeFindings(p.Findings), micros(now())).Scan(&id)
	})
	if err != nil {
		return p, interpret(err)
	}
	return db.proposalGet(ctx, db.r, orgID, id)
}

// ProposalGet returns one proposal of the org.
func (db *DB) ProposalGet(ctx context.Context, orgID, id int64) (teammem.Proposal, error) {
	return db.proposalGet(ctx, db.r, orgID, id)
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (db *DB) proposalGet(ctx context.Context, q queryRower, orgID, id int64) (teammem.Proposal, error) {
	p, err := scanProposal(q.QueryRowContext(ctx, `SELECT `+proposalColumns("p.changes")+` WHERE p.org_id = ? AND p.id = ?`, orgID, id))
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return p, teammem.Errorf(teammem.ENotFound, "proposal %d not found", id)
	}
	return p, err
}

// ProposalList pages an org's proposals, newest first, without content:
// each change keeps its key, op and base.
func (db *DB) ProposalList(ctx context.Context, orgID int64, f teammem.ProposalFilter) ([]teammem.Proposal, error) {
	f.Limit = teammem.ListLimit(f.Limit)
	// json_remove drops each change's content inside SQLite.
	rows, err := db.query(ctx, `SELECT `+proposalColumns(`(SELECT json_group_array(json_remove(c.value, '$.content')) FROM json_each(p.changes) c)`)+`
		WHERE p.org_id = ? AND (? = '' OR p.status = ?) AND (? = 0 OR p.author_id = ?) AND (? = '' OR p.repo = ?) AND (? = 0 OR p.id < ?)
		ORDER BY p.id DESC LIMIT ?`, orgID, string(f.Status), string(f.Status), f.AuthorID, f.AuthorID, f.Repo, f.Repo, f.BeforeID, f.BeforeID, f.Limit)
	return collect(rows, err, scanProposal)
}

// ProposalDecide moves a pending proposal to its decision.
func (db *DB) ProposalDecide(ctx context.Context, orgID, id int64, d teammem.ProposalDecideParams) (teammem.Proposal, error) {
	tx, err := db.begin(ctx, orgID)
	if err != nil {
		return teammem.Proposal{}, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE proposals SET status = ?, decided_at = ?, decided_by = ?, note = ?
		WHERE org_id = ? AND id = ? AND status = 'pending'`, string(d.Status), micros(d.At),
		sql.NullInt64{Int64: d.By, Valid: d.By != 0}, d.Note, orgID, id)
	if err != nil {
		return teammem.Proposal{}, interpret(err)
	}
	n, _ := res.RowsAffected()
	p, err := db.proposalGet(ctx, tx, orgID, id)
	if err != nil {
		return p, err
	}
	if n == 0 {
		return p, teammem.Errorf(teammem.EConflict, "proposal %d was %s already", id, p.Status)
	}
	return p, interpret(tx.Commit())
}

// proposalsOfSpaceSQL lists the proposals of a space (the org's proposals
// of its repo and scope; for a personal space, its owner's) whose stored
// changes match a LIKE pattern (teammem.ProposalErasure.LikePattern).
const proposalsOfSpaceSQL = `SELECT p.id, p.changes, p.findings FROM proposals p
	JOIN spaces s ON s.org_id = p.org_id AND s.id = ? JOIN repos r ON r.id = s.repo_id
	WHERE p.org_id = ? AND p.repo = r.slug AND p.scope = s.scope AND (s.scope = 'team' OR p.author_id = s.user_id)
		AND p.changes LIKE ? ESCAPE '\'`

// proposalsErase removes from the proposals of a space the content e
// matches (teammem.EraseProposal), in the caller's write transaction, and
// returns how many proposals it changed. secure_delete zeroes the old
// rows' bytes as for versions.
func proposalsErase(ctx context.Context, tx *sql.Tx, orgID, spaceID int64, e teammem.ProposalErasure) (int, error) {
	rows, err := tx.QueryContext(ctx, proposalsOfSpaceSQL, spaceID, orgID, e.LikePattern())
	if err != nil {
		return 0, fmt.Errorf("find proposals to erase: %w", interpret(err))
	}
	var found []teammem.Proposal
	for rows.Next() {
		var p teammem.Proposal
		var changes, findings string
		if err := rows.Scan(&p.ID, &changes, &findings); err != nil {
			rows.Close()
			return 0, interpret(err)
		}
		if err := teammem.DecodeProposalColumns(&p, changes, findings); err != nil {
			rows.Close()
			return 0, fmt.Errorf("proposal %d: %w", p.ID, err)
		}
		found = append(found, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, interpret(err)
	}
	return teammem.EraseProposals(found, e, func(p teammem.Proposal, changes string) error {
		_, err := tx.ExecContext(ctx, `UPDATE proposals SET changes = ?, findings = ? WHERE org_id = ? AND id = ?`,
			changes, teammem.EncodeFindings(p.Findings), orgID, p.ID)
		return interpret(err)
	})
}
