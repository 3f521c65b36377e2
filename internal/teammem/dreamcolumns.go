package teammem

import (
	"encoding/json"
	"fmt"
)

// The JSON columns of a dream row, encoded and decoded here once for both
// drivers.

// EncodeDreamColumns returns a dream's session ids and base as the text the
// drivers store ("null" for no sessions input, "{}" for no base).
func EncodeDreamColumns(d Dream) (sessions, base string, err error) {
	s, err := json.Marshal(d.SessionIDs)
	if err != nil {
		return "", "", fmt.Errorf("encode session ids: %w", err)
	}
	if d.Base == nil {
		return string(s), "{}", nil
	}
	b, err := json.Marshal(d.Base)
	if err != nil {
		return "", "", fmt.Errorf("encode base: %w", err)
	}
	return string(s), string(b), nil
}

// EncodeDreamBase encodes a start's base.
func EncodeDreamBase(base map[string]string) (string, error) {
	_, b, err := EncodeDreamColumns(Dream{Base: base})
	return b, err
}

// DecodeDreamColumns sets d's session ids and base from their columns.
func DecodeDreamColumns(d *Dream, sessions, base string) error {
	if err := json.Unmarshal([]byte(sessions), &d.SessionIDs); err != nil {
		return fmt.Errorf("dream %s session ids: %w", d.ID, err)
	}
	if err := json.Unmarshal([]byte(base), &d.Base); err != nil {
		return fmt.Errorf("dream %s base: %w", d.ID, err)
	}
	return nil
}
