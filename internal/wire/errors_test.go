package wire

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// refusalSamples holds one refusal of every reason, as the server makes
// it: a reason added to teammem without one here fails the test.
var refusalSamples = map[teammem.Reason]*teammem.Error{
	teammem.ReasonTooManyEntries:    teammem.TooManyEntries(3, 4),
	teammem.ReasonEntryTooLarge:     teammem.EntryTooLarge("a.md", 10, 5),
	teammem.ReasonBodyTooLarge:      teammem.BodyTooLarge(4 << 20),
	teammem.ReasonSecretDetected:    teammem.Errorf(teammem.ESecretDetected, "1 entries contain secrets; nothing was written").WithReason(teammem.ReasonSecretDetected),
	teammem.ReasonPoisoningDetected: teammem.PoisonRejected([]teammem.PoisonFinding{{Path: "a.md", RuleID: "r"}}),
	teammem.ReasonHeldForReview:     teammem.Proposal{ID: 7, Reason: "poisoning"}.HeldError(),
	teammem.ReasonArchived:          teammem.StoreArchived(),
	teammem.ReasonTooManyStores:     asError(teammem.TooManyStores(3)),
	teammem.ReasonTooManyKeys:       asError(teammem.TooManyKeys(3)),
}

// The codes are part of the API (the spec, Claude Code's client): they are
// spelled out here so that a change to the table shows as a change on the wire.
var wantCodes = map[teammem.Reason]string{
	teammem.ReasonTooManyEntries:    "team_memory_too_many_entries",
	teammem.ReasonEntryTooLarge:     "team_memory_entry_too_large",
	teammem.ReasonBodyTooLarge:      "request_too_large",
	teammem.ReasonSecretDetected:    "team_memory_secret_detected",
	teammem.ReasonPoisoningDetected: "team_memory_poisoning_detected",
	teammem.ReasonHeldForReview:     "team_memory_held_for_review",
	teammem.ReasonArchived:          "",
	teammem.ReasonTooManyStores:     "memory_store_limit_reached",
	teammem.ReasonTooManyKeys:       "too_many_keys",
}

func TestRefusalTableNamesEveryReason(t *testing.T) {
	for _, r := range teammem.Reasons() {
		f, ok := refusals[r]
		switch {
		case !ok:
			t.Errorf("%v: no entry in the error body's table", r)
		case (f.code == "") == (f.message == ""):
			t.Errorf("%v: named by code %q and message %q; want exactly one", r, f.code, f.message)
		case RefusalCode(r) != wantCodes[r]:
			t.Errorf("%v: code %q, want %q", r, RefusalCode(r), wantCodes[r])
		}
	}
	if len(refusals) != len(teammem.Reasons()) {
		t.Errorf("the table has %d entries for %d reasons", len(refusals), len(teammem.Reasons()))
	}
}

// TestRefusalRoundTrip sends every reason's refusal through the error body
// and rebuilds it as a client does: the reason, code and details survive.
func TestRefusalRoundTrip(t *testing.T) {
	for _, r := range teammem.Reasons() {
		te, ok := refusalSamples[r]
		if !ok {
			t.Errorf("%v: no sample refusal", r)
			continue
		}
		if te.Reason != r {
			t.Errorf("%v: the sample is made with reason %v", r, te.Reason)
		}
		raw, err := json.Marshal(ErrorBody{Error: ErrorObject{Type: te.Code, Message: te.Message, Details: ErrorDetails(te)}})
		if err != nil {
			t.Fatal(err)
		}
		var eb ErrorBody
		if err := json.Unmarshal(raw, &eb); err != nil {
			t.Fatal(err)
		}
		got := eb.Error.Err()
		if got.Reason != r || got.Code != te.Code || got.Message != te.Message {
			t.Errorf("%v: %s came back as %v %q %q", r, raw, got.Reason, got.Code, got.Message)
		}
		if code := wantCodes[r]; code != "" && got.Details["error_code"] != code {
			t.Errorf("%v: details %v, want error_code %q", r, got.Details, code)
		}
		for k := range te.Details {
			if _, ok := got.Details[k]; !ok {
				t.Errorf("%v: detail %q lost on the way: %s", r, k, raw)
			}
		}
	}
}

func TestErrorDetailsLeavesTheRefusalAlone(t *testing.T) {
	te := teammem.TooManyEntries(3, 4)
	d := ErrorDetails(te)
	if d["error_code"] != "team_memory_too_many_entries" || d["max_entries"] != 3 || d["received_entries"] != 4 {
		t.Fatalf("details = %v", d)
	}
	if _, ok := te.Details["error_code"]; ok {
		t.Fatalf("ErrorDetails wrote into the error's own details: %v", te.Details)
	}
	plain := teammem.Errorf(teammem.EInvalid, "no").WithDetails(map[string]any{"x": 1})
	if d := ErrorDetails(plain); len(d) != 1 || d["x"] != 1 {
		t.Fatalf("a refusal without a reason: details = %v", d)
	}
	if ErrorDetails(nil) != nil || (ErrorObject{Type: teammem.EInvalid, Message: "x"}).Err().Reason != teammem.ReasonNone {
		t.Fatal("no reason should come from nothing")
	}
	if r := (ErrorObject{Type: teammem.EInvalid, Details: map[string]any{"error_code": "something_else"}}).Err().Reason; r != teammem.ReasonNone {
		t.Fatalf("an unknown error_code gave %v", r)
	}
}

func asError(err error) *teammem.Error {
	var te *teammem.Error
	if !errors.As(err, &te) {
		panic(err)
	}
	return te
}
