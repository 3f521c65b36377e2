package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"github.com/teammem/teammem/internal/teammem"
)

const keyColumns = `k.id, k.org_id, k.user_id, u.handle, k.name, k.prefix, k.read_only, k.expires_at, k.revoked_at, k.last_used_at, k.created_at`

func scanKey(row rowScanner, extra ...any) (teammem.APIKey, error) {
	var k teammem.APIKey
	var expires, revoked, used sql.NullInt64
	var created int64
	dest := append([]any{&k.ID, &k.OrgID, &k.UserID, &k.UserHandle, &k.Name, &k.Prefix, &k.ReadOnly, &expires, &revoked, &used, &created}, extra...)
	if err := row.Scan(dest...); err != nil {
		return k, interpret(err)
	}
	k.ExpiresAt, k.RevokedAt, k.LastUsedAt = ptrFromMicros(expires), ptrFromMicros(revoked), ptrFromMicros(used)
	k.CreatedAt = fromMicros(created)
	return k, nil
}

// KeyCreate stores a key's prefix and hash. The count of the user's active
// keys and the insert share one transaction on the single writer
// connection, so concurrent creates cannot both take the last slot.
func (db *DB) KeyCreate(ctx context.Context, orgID int64, p teammem.KeyCreateParams) (teammem.APIKey, error) {
	tx, err := db.begin(ctx, orgID)
	if err != nil {
		return teammem.APIKey{}, err
	}
	defer tx.Rollback()
	at := now()
	if p.MaxActive > 0 {
		var active int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM api_keys WHERE org_id = ? AND user_id = ?
			AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`, orgID, p.UserID, micros(at)).Scan(&active)
		if err != nil {
			return teammem.APIKey{}, interpret(err)
		}
		if active >= p.MaxActive {
			return teammem.APIKey{}, teammem.TooManyKeys(p.MaxActive)
		}
	}
	id := uuid.NewString()
	_, err = tx.ExecContext(ctx, `INSERT INTO api_keys (id, org_id, user_id, name, prefix, key_hash, read_only, expires_at, created_at)
		SELECT ?, ?, id, ?, ?, ?, ?, ?, ? FROM users WHERE org_id = ? AND id = ?`,
		id, orgID, p.Name, p.Prefix, p.Hash, p.ReadOnly, nullMicros(p.ExpiresAt), micros(at), orgID, p.UserID)
	if err != nil {
		return teammem.APIKey{}, interpret(err)
	}
	k, err := scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.org_id = ? AND k.id = ?`, orgID, id))
	if err != nil {
		return k, err
	}
	return k, interpret(tx.Commit())
}

// KeyLookup resolves a key hash to its principal.
func (db *DB) KeyLookup(ctx context.Context, hash []byte) (teammem.Principal, error) {
	var p teammem.Principal
	var settings string
	var orgCreated, userCreated int64
	row := db.queryRow(ctx, `SELECT `+keyColumns+`, u.role, u.disabled, u.created_at,
			o.slug, o.name, o.settings, o.disabled, o.created_at
		FROM api_keys k JOIN users u ON u.id = k.user_id JOIN orgs o ON o.id = k.org_id
		WHERE k.key_hash = ?`, hash)
	k, err := scanKey(row, &p.User.Role, &p.User.Disabled, &userCreated, &p.Org.Slug, &p.Org.Name, &settings, &p.Org.Disabled, &orgCreated)
	if err != nil {
		return p, err
	}
	p.Key = k
	p.User.ID, p.User.OrgID, p.User.Handle, p.User.CreatedAt = k.UserID, k.OrgID, k.UserHandle, fromMicros(userCreated)
	p.Org.ID, p.Org.CreatedAt = k.OrgID, fromMicros(orgCreated)
	p.Org.Settings, err = teammem.DecodeOrgSettings(p.Org.ID, settings)
	return p, err
}

// KeyList lists an org's keys, newest first.
func (db *DB) KeyList(ctx context.Context, orgID int64, f teammem.KeyFilter) ([]teammem.APIKey, error) {
	rows, err := db.query(ctx, `SELECT `+keyColumns+` FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.org_id = ? AND (? = 0 OR k.user_id = ?) ORDER BY k.created_at DESC, k.id`, orgID, f.UserID, f.UserID)
	return scanKeys(rows, err)
}

// scanKeys reads every key of a query's rows, closing them; err is the query's own error.
func scanKeys(rows *sql.Rows, err error) ([]teammem.APIKey, error) {
	return collect(rows, err, func(r rowScanner) (teammem.APIKey, error) { return scanKey(r) })
}

// KeyRevoke revokes a key; revoking twice keeps the first time.
func (db *DB) KeyRevoke(ctx context.Context, orgID int64, keyID string, at time.Time) (teammem.APIKey, error) {
	var k teammem.APIKey
	err := db.writing(ctx, orgID, func() error {
		res, err := db.w.ExecContext(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE org_id = ? AND id = ?`, micros(at), orgID, keyID)
		if err != nil {
			return interpret(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return teammem.Errorf(teammem.ENotFound, "key %q not found", keyID)
		}
		k, err = scanKey(db.w.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.org_id = ? AND k.id = ?`, orgID, keyID))
		return err
	})
	return k, err
}

// KeysTouch records last-use times.
func (db *DB) KeysTouch(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	// Keys of every org at once: the server's own turn.
	tx, err := db.begin(ctx, 0)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for id, at := range used {
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = max(coalesce(last_used_at, 0), ?) WHERE id = ?`, micros(at), id); err != nil {
			return interpret(err)
		}
	}
	return interpret(tx.Commit())
}
