package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

const orgColumns = `id, slug, name, settings, disabled, created_at`

func scanOrg(row pgx.Row) (teammem.Org, error) {
	var o teammem.Org
	var settings string
	if err := row.Scan(&o.ID, &o.Slug, &o.Name, &settings, &o.Disabled, &o.CreatedAt); err != nil {
		return o, interpret(err)
	}
	var err error
	o.Settings, err = teammem.DecodeOrgSettings(o.ID, settings)
	return o, err
}

// OrgCreate creates an org.
func (db *DB) OrgCreate(ctx context.Context, p teammem.OrgCreateParams) (teammem.Org, error) {
	settings, err := teammem.EncodeOrgSettings(p.Settings)
	if err != nil {
		return teammem.Org{}, err
	}
	var org teammem.Org
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		at := now()
		if org, err = scanOrg(tx.QueryRow(ctx, `INSERT INTO orgs (slug, name, settings, created_at) VALUES ($1, $2, $3, $4)
			RETURNING `+orgColumns, p.Slug, p.Name, string(settings), at)); err != nil || p.Owner == nil {
			return err
		}
		o := p.Owner
		var userID int64
		if err := tx.QueryRow(ctx, `INSERT INTO users (org_id, handle, role, created_at) VALUES ($1, $2, 'owner', $3) RETURNING id`,
			org.ID, o.Handle, at).Scan(&userID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO api_keys (id, org_id, user_id, name, prefix, key_hash, read_only, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, false, $7)`, uuid.NewString(), org.ID, userID, o.KeyName, o.KeyPrefix, o.KeyHash, at)
		return err
	})
	return org, interpret(err)
}

// OrgGet returns an org by id.
func (db *DB) OrgGet(ctx context.Context, orgID int64) (teammem.Org, error) {
	return scanOrg(db.pool.QueryRow(ctx, `SELECT `+orgColumns+` FROM orgs WHERE id = $1`, orgID))
}

// OrgGetBySlug returns an org by slug.
func (db *DB) OrgGetBySlug(ctx context.Context, slug string) (teammem.Org, error) {
	return scanOrg(db.pool.QueryRow(ctx, `SELECT `+orgColumns+` FROM orgs WHERE slug = $1`, slug))
}

// OrgList lists every org, oldest first.
func (db *DB) OrgList(ctx context.Context) ([]teammem.Org, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+orgColumns+` FROM orgs ORDER BY id`)
	return collect(rows, err, scanOrg)
}

// OrgUpdate changes an org's name, settings or disabled flag.
func (db *DB) OrgUpdate(ctx context.Context, orgID int64, p teammem.OrgUpdateParams) (teammem.Org, error) {
	settings, err := teammem.EncodeOrgSettingsChange(p.Settings)
	if err != nil {
		return teammem.Org{}, err
	}
	return scanOrg(db.pool.QueryRow(ctx, updateOrgSQL, p.Name, settings, p.Disabled, orgID))
}

const updateOrgSQL = `UPDATE orgs SET name = coalesce($1, name), settings = coalesce($2, settings),
	disabled = coalesce($3, disabled) WHERE id = $4 RETURNING ` + orgColumns

// OrgEdit changes an org with a read-modify-write under the org row's lock,
// so concurrent edits on any replica apply one after another.
func (db *DB) OrgEdit(ctx context.Context, orgID int64, edit func(teammem.Org) (teammem.OrgUpdateParams, error)) (teammem.Org, error) {
	var org teammem.Org
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		if org, err = scanOrg(tx.QueryRow(ctx, `SELECT `+orgColumns+` FROM orgs WHERE id = $1 FOR UPDATE`, orgID)); err != nil {
			return err
		}
		p, err := edit(org)
		if err != nil {
			return err
		}
		settings, err := teammem.EncodeOrgSettingsChange(p.Settings)
		if err != nil {
			return err
		}
		org, err = scanOrg(tx.QueryRow(ctx, updateOrgSQL, p.Name, settings, p.Disabled, orgID))
		return err
	})
	return org, interpret(err)
}

// OrgCount counts orgs.
func (db *DB) OrgCount(ctx context.Context) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM orgs`).Scan(&n)
	return n, interpret(err)
}
