package sqlite

import (
	"context"
	"database/sql"

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
	return db.writing(ctx, orgID, func() error {
		_, err := db.w.ExecContext(ctx, insertAuditSQL, orgID, sql.NullInt64{Int64: e.ActorID, Valid: e.ActorID != 0}, e.Action, e.Repo, e.Target,
			details, micros(at))
		return interpret(err)
	})
}

// auditDetails encodes an event's details as stored.
func auditDetails(e teammem.AuditEvent) (string, error) { return teammem.EncodeAuditDetails(e.Details) }

// AuditList pages an org's audit log, newest first.
func (db *DB) AuditList(ctx context.Context, orgID int64, f teammem.AuditFilter) ([]teammem.AuditEvent, error) {
	f.Limit = teammem.ListLimit(f.Limit)
	rows, err := db.query(ctx, `SELECT a.id, coalesce(a.actor_id, 0), coalesce(u.handle, ''), a.action, a.repo, a.target, a.details, a.created_at
		FROM audit_events a LEFT JOIN users u ON u.id = a.actor_id
		WHERE a.org_id = ? AND (? = 0 OR a.actor_id = ?) AND (? = '' OR a.repo = ?) AND (? = '' OR a.action = ?) AND (? = 0 OR a.id < ?)
		ORDER BY a.id DESC LIMIT ?`,
		orgID, f.ActorID, f.ActorID, f.Repo, f.Repo, f.Action, f.Action, f.BeforeID, f.BeforeID, f.Limit)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []teammem.AuditEvent
	for rows.Next() {
		var e teammem.AuditEvent
		var details string
		var created int64
		if err := rows.Scan(&e.ID, &e.ActorID, &e.Actor, &e.Action, &e.Repo, &e.Target, &details, &created); err != nil {
			return nil, interpret(err)
		}
		e.OrgID, e.CreatedAt = orgID, fromMicros(created)
		if e.Details, err = teammem.DecodeAuditDetails(details); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, interpret(rows.Err())
}
