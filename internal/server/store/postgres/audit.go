package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// AuditAppend adds an event to an org's audit log.
func (db *DB) AuditAppend(ctx context.Context, orgID int64, e teammem.AuditEvent) error {
	details, err := auditDetails(e)
	if err != nil {
		return err
	}
	at := e.CreatedAt
	if at.IsZero() {
		at = now()
	}
	_, err = db.pool.Exec(ctx, insertAuditSQL, orgID, nullID(e.ActorID), e.Action, e.Repo, e.Target, details, at)
	return interpret(err)
}

const insertAuditSQL = `INSERT INTO audit_events (org_id, actor_id, action, repo, target, details, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`

// auditDetails encodes an event's details as stored.
func auditDetails(e teammem.AuditEvent) (string, error) { return teammem.EncodeAuditDetails(e.Details) }

// AuditList pages an org's audit log, newest first. Zero filter fields match
// everything; the page size is teammem.ListLimit's.
func (db *DB) AuditList(ctx context.Context, orgID int64, f teammem.AuditFilter) ([]teammem.AuditEvent, error) {
	f.Limit = teammem.ListLimit(f.Limit)
	rows, err := db.pool.Query(ctx, `SELECT a.id, coalesce(a.actor_id, 0), coalesce(u.handle, ''), a.action, a.repo, a.target, a.details, a.created_at
		FROM audit_events a LEFT JOIN users u ON u.id = a.actor_id
		WHERE a.org_id = $1 AND ($2::bigint = 0 OR a.actor_id = $2) AND ($3::text = '' OR a.repo = $3)
			AND ($4::text = '' OR a.action = $4) AND ($5::bigint = 0 OR a.id < $5)
		ORDER BY a.id DESC LIMIT $6`, orgID, f.ActorID, f.Repo, f.Action, f.BeforeID, f.Limit)
	return collect(rows, err, func(row pgx.Row) (teammem.AuditEvent, error) {
		var e teammem.AuditEvent
		var details string
		if err := row.Scan(&e.ID, &e.ActorID, &e.Actor, &e.Action, &e.Repo, &e.Target, &details, &e.CreatedAt); err != nil {
			return e, interpret(err)
		}
		e.OrgID = orgID
		d, err := teammem.DecodeAuditDetails(details)
		e.Details = d
		return e, err
	})
}
