package sqlite

import (
	"context"

	"github.com/google/uuid"

	"github.com/teammem/teammem/internal/teammem"
)

const orgColumns = `id, slug, name, settings, disabled, created_at`

func scanOrg(row rowScanner) (teammem.Org, error) {
	var o teammem.Org
	var settings string
	var created int64
	if err := row.Scan(&o.ID, &o.Slug, &o.Name, &settings, &o.Disabled, &created); err != nil {
		return o, interpret(err)
	}
	o.CreatedAt = fromMicros(created)
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
	tx, err := db.begin(ctx, 0)
	if err != nil {
		return teammem.Org{}, err
	}
	defer tx.Rollback()
	at := micros(now())
	org, err := scanOrg(tx.QueryRowContext(ctx, `INSERT INTO orgs (slug, name, settings, created_at) VALUES (?, ?, ?, ?) RETURNING `+orgColumns,
		p.Slug, p.Name, string(settings), at))
	if err != nil {
		return org, err
	}
	if o := p.Owner; o != nil {
		var userID int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO users (org_id, handle, role, created_at) VALUES (?, ?, 'owner', ?) RETURNING id`,
			org.ID, o.Handle, at).Scan(&userID); err != nil {
			return org, interpret(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, org_id, user_id, name, prefix, key_hash, read_only, created_at)
			VALUES (?, ?, ?, ?, ?, ?, 0, ?)`, uuid.NewString(), org.ID, userID, o.KeyName, o.KeyPrefix, o.KeyHash, at); err != nil {
			return org, interpret(err)
		}
	}
	return org, interpret(tx.Commit())
}

// OrgGet returns an org by id.
func (db *DB) OrgGet(ctx context.Context, orgID int64) (teammem.Org, error) {
	return scanOrg(db.queryRow(ctx, `SELECT `+orgColumns+` FROM orgs WHERE id = ?`, orgID))
}

// OrgGetBySlug returns an org by slug.
func (db *DB) OrgGetBySlug(ctx context.Context, slug string) (teammem.Org, error) {
	return scanOrg(db.queryRow(ctx, `SELECT `+orgColumns+` FROM orgs WHERE slug = ?`, slug))
}

// OrgList lists every org, oldest first.
func (db *DB) OrgList(ctx context.Context) ([]teammem.Org, error) {
	rows, err := db.query(ctx, `SELECT `+orgColumns+` FROM orgs ORDER BY id`)
	return collect(rows, err, scanOrg)
}

// OrgUpdate changes an org's name, settings or disabled flag.
func (db *DB) OrgUpdate(ctx context.Context, orgID int64, p teammem.OrgUpdateParams) (teammem.Org, error) {
	settings, err := teammem.EncodeOrgSettingsChange(p.Settings)
	if err != nil {
		return teammem.Org{}, err
	}
	var org teammem.Org
	err = db.writing(ctx, orgID, func() (err error) {
		org, err = scanOrg(db.w.QueryRowContext(ctx, `UPDATE orgs SET name = coalesce(?, name), settings = coalesce(?, settings),
			disabled = coalesce(?, disabled) WHERE id = ? RETURNING `+orgColumns, p.Name, settings, p.Disabled, orgID))
		return err
	})
	return org, err
}

// OrgEdit changes an org with a read-modify-write in one transaction on the
// single writer connection, which serializes it with every other write.
func (db *DB) OrgEdit(ctx context.Context, orgID int64, edit func(teammem.Org) (teammem.OrgUpdateParams, error)) (teammem.Org, error) {
	tx, err := db.begin(ctx, orgID)
	if err != nil {
		return teammem.Org{}, err
	}
	defer tx.Rollback()
	org, err := scanOrg(tx.QueryRowContext(ctx, `SELECT `+orgColumns+` FROM orgs WHERE id = ?`, orgID))
	if err != nil {
		return org, err
	}
	p, err := edit(org)
	if err != nil {
		return org, err
	}
	settings, err := teammem.EncodeOrgSettingsChange(p.Settings)
	if err != nil {
		return org, err
	}
	org, err = scanOrg(tx.QueryRowContext(ctx, `UPDATE orgs SET name = coalesce(?, name), settings = coalesce(?, settings),
		disabled = coalesce(?, disabled) WHERE id = ? RETURNING `+orgColumns, p.Name, settings, p.Disabled, orgID))
	if err != nil {
		return org, err
	}
	return org, interpret(tx.Commit())
}

// OrgCount counts orgs.
func (db *DB) OrgCount(ctx context.Context) (int, error) {
	var n int
	err := db.queryRow(ctx, `SELECT count(*) FROM orgs`).Scan(&n)
	return n, interpret(err)
}
