package httpapi

import (
	"errors"
	"net/http"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// TestRefusalTablesNameEveryReason: a reason added to teammem must be
// placed in the memory stores' table and the push metrics' table (the
// error body's is checked in wire), so none is answered or counted by
// accident.
func TestRefusalTablesNameEveryReason(t *testing.T) {
	for _, r := range teammem.Reasons() {
		if _, ok := storeRefusals[r]; !ok {
			t.Errorf("%v: not in storeRefusals", r)
		}
		if _, ok := pushRefusals[r]; !ok {
			t.Errorf("%v: not in pushRefusals", r)
		}
	}
	if n := len(teammem.Reasons()); len(storeRefusals) != n || len(pushRefusals) != n {
		t.Errorf("%d reasons, %d store entries, %d push entries", n, len(storeRefusals), len(pushRefusals))
	}
}

// TestPushOutcomeByReason pins the metric labels of each refused push.
func TestPushOutcomeByReason(t *testing.T) {
	for _, c := range []struct {
		err          error
		outcome, cap string
	}{
		{teammem.TooManyEntries(3, 4), "too_many_entries", "max_entries"},
		{teammem.EntryTooLarge("a", 10, 5), "entry_too_large", "max_entry_bytes"},
		{asTooLarge(&http.MaxBytesError{Limit: 10}), "request_too_large", "max_body_bytes"},
		{teammem.Errorf(teammem.ESecretDetected, "x").WithReason(teammem.ReasonSecretDetected), "secret_rejected", ""},
		{teammem.PoisonRejected([]teammem.PoisonFinding{{Path: "a"}}), "poisoning_rejected", ""},
		{teammem.Proposal{ID: 1}.HeldError(), "invalid", ""},
		{teammem.StoreArchived(), "invalid", ""},
		{teammem.TooManyStores(3), "entry_too_large", ""},
		{teammem.TooManyKeys(3), "conflict", ""},
		{teammem.Errorf(teammem.ETooLarge, "a cap without a reason"), "entry_too_large", ""},
	} {
		if got := pushOutcome(teammem.WriteResult{}, c.err); got != c.outcome {
			t.Errorf("%v: outcome %q, want %q", c.err, got, c.outcome)
		}
		if got := pushRefusals[teammem.ErrorReason(c.err)].cap; got != c.cap {
			t.Errorf("%v: cap %q, want %q", c.err, got, c.cap)
		}
	}
}

// TestStoreWriteErrorByReason pins the messages the memory stores answer
// the write path's refusals with.
func TestStoreWriteErrorByReason(t *testing.T) {
	for _, c := range []struct {
		err        error
		code, want string
	}{
		{teammem.TooManyEntries(3, 4), teammem.ETooLarge, teammem.MsgStoreFullCount},
		{teammem.EntryTooLarge("a", 10, 5), teammem.ETooLarge, "content must be at most 5 bytes"},
		{teammem.EntryTooLarge("a", 1<<20, teammem.MaxMemoryBytes), teammem.ETooLarge, teammem.MsgContentTooLarge},
		{teammem.Errorf(teammem.ESecretDetected, "x").WithReason(teammem.ReasonSecretDetected), teammem.ESecretDetected, teammem.MsgContentSecret},
		{teammem.PoisonRejected(nil), teammem.EInvalid, teammem.ScreenedMessage},
		{teammem.StoreArchived(), teammem.EInvalid, teammem.MsgArchived},
		{teammem.Errorf(teammem.EConflict, "as is"), teammem.EConflict, "as is"},
	} {
		got := storeWriteError(c.err)
		var te *teammem.Error
		if !errors.As(got, &te) || te.Code != c.code || te.Message != c.want || te.Reason != teammem.ErrorReason(c.err) {
			t.Errorf("%v: got %v (%s, %v), want %s %q", c.err, got, teammem.ErrorCode(got), teammem.ErrorReason(got), c.code, c.want)
		}
	}
}
