package postgres

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

const keyColumns = `k.id, k.org_id, k.user_id, u.handle, k.name, k.prefix, k.read_only, k.expires_at, k.revoked_at, k.last_used_at, k.created_at`

func scanKey(row pgx.Row, extra ...any) (teammem.APIKey, error) {
	var k teammem.APIKey
	dest := append([]any{&k.ID, &k.OrgID, &k.UserID, &k.UserHandle, &k.Name, &k.Prefix, &k.ReadOnly,
		&k.ExpiresAt, &k.RevokedAt, &k.LastUsedAt, &k.CreatedAt}, extra...)
	if err := row.Scan(dest...); err != nil {
		return k, interpret(err)
	}
	return k, nil
}

// KeyCreate stores a key's prefix and hash. The user must belong to the org
// (ENotFound otherwise); a hash already stored is EConflict. With a cap the
// user's row is locked first, so concurrent creates of one user's keys
// count and insert one after the other.
func (db *DB) KeyCreate(ctx context.Context, orgID int64, p teammem.KeyCreateParams) (teammem.APIKey, error) {
	var k teammem.APIKey
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		at := now()
		if p.MaxActive > 0 {
			// Lock, then count in a statement of its own: under READ
			// COMMITTED only a later statement's snapshot sees the keys of
			// the create that held the lock before.
			if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, p.UserID); err != nil {
				return err
			}
			var active int
			err := tx.QueryRow(ctx, `SELECT count(*) FROM api_keys WHERE org_id = $1 AND user_id = $2
				AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)`, orgID, p.UserID, at).Scan(&active)
			if err != nil {
				return err
			}
			if active >= p.MaxActive {
				return teammem.TooManyKeys(p.MaxActive)
			}
		}
		// Parameters only used in the SELECT list get no type from the
		// INSERT target, hence the casts.
		var err error
		k, err = scanKey(tx.QueryRow(ctx, `WITH k AS (
				INSERT INTO api_keys (id, org_id, user_id, name, prefix, key_hash, read_only, expires_at, created_at)
				SELECT $1::text, u.org_id, u.id, $3::text, $4::text, $5::bytea, $6::boolean, $7::timestamptz, $8::timestamptz
				FROM users u WHERE u.org_id = $2 AND u.id = $9
				RETURNING *)
			SELECT `+keyColumns+` FROM k JOIN users u ON u.id = k.user_id`,
			uuid.NewString(), orgID, p.Name, p.Prefix, p.Hash, p.ReadOnly, p.ExpiresAt, at, p.UserID))
		return err
	})
	return k, interpret(err) // passes TooManyKeys through as it is
}

// KeyLookup resolves a key hash to its principal.
func (db *DB) KeyLookup(ctx context.Context, hash []byte) (teammem.Principal, error) {
	var p teammem.Principal
	var role, settings string
	row := db.pool.QueryRow(ctx, `SELECT `+keyColumns+`, u.role, u.disabled, u.created_at,
			o.slug, o.name, o.settings, o.disabled, o.created_at
		FROM api_keys k JOIN users u ON u.id = k.user_id JOIN orgs o ON o.id = k.org_id
		WHERE k.key_hash = $1`, hash)
	k, err := scanKey(row, &role, &p.User.Disabled, &p.User.CreatedAt, &p.Org.Slug, &p.Org.Name, &settings, &p.Org.Disabled, &p.Org.CreatedAt)
	if err != nil {
		return p, err
	}
	p.Key = k
	p.User.ID, p.User.OrgID, p.User.Handle, p.User.Role = k.UserID, k.OrgID, k.UserHandle, teammem.Role(role)
	p.Org.ID = k.OrgID
	p.Org.Settings, err = teammem.DecodeOrgSettings(p.Org.ID, settings)
	return p, err
}

// KeyList lists an org's keys, newest first.
func (db *DB) KeyList(ctx context.Context, orgID int64, f teammem.KeyFilter) ([]teammem.APIKey, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.org_id = $1 AND ($2::bigint = 0 OR k.user_id = $2) ORDER BY k.created_at DESC, k.id COLLATE "C"`, orgID, f.UserID)
	return collect(rows, err, func(r pgx.Row) (teammem.APIKey, error) { return scanKey(r) })
}

// KeyRevoke revokes a key; revoking twice keeps the first time.
func (db *DB) KeyRevoke(ctx context.Context, orgID int64, keyID string, at time.Time) (teammem.APIKey, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, `WITH k AS (
			UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE org_id = $2 AND id = $3 RETURNING *)
		SELECT `+keyColumns+` FROM k JOIN users u ON u.id = k.user_id`, at, orgID, keyID))
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return k, teammem.Errorf(teammem.ENotFound, "key %q not found", keyID)
	}
	return k, err
}

// KeysTouch records last-use times, never moving one backwards. The updates
// run in one transaction in key order, so that two replicas flushing the same
// keys at once cannot deadlock.
func (db *DB) KeysTouch(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	ids := make([]string, 0, len(used))
	for id := range used {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	b := &pgx.Batch{}
	for _, id := range ids {
		// greatest ignores NULL, so a first use is recorded as is.
		b.Queue(`UPDATE api_keys SET last_used_at = greatest(last_used_at, $1) WHERE id = $2`, used[id], id)
	}
	return interpret(pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, b).Close()
	}))
}
