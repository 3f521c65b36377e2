package memsync

import (
	"errors"
	"slices"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// refusedUpserts returns the files of a batch the server refused one by
// one, as skips: under the reject policies a secret or a poisoning finding
// refuses the whole write (422 or 400), and an entry over the org's size
// cap does too (413). The engine leaves those files out, keeps them on
// disk, reports each with its reason and sends the rest again, so one file
// never holds back the others. nil: err is no such refusal (or names no
// file of upserts), and the push fails with it as before.
func refusedUpserts(err error, upserts []wire.BatchUpsert) []Skip {
	var ae *apiclient.APIError
	if !errors.As(err, &ae) || ae.Err == nil || ae.Err.Details == nil {
		return nil
	}
	var d wire.RefusedDetails
	if wire.DecodeDetails(ae.Err.Details, &d) != nil {
		return nil
	}
	sent := func(key string) bool {
		return slices.ContainsFunc(upserts, func(u wire.BatchUpsert) bool { return u.Key == key })
	}
	var out []Skip
	switch ae.Err.Reason { // rebuilt from the body by wire.ErrorObject.Err
	case teammem.ReasonSecretDetected:
		for _, s := range d.SkippedSecrets {
			if sent(s.Path) {
				out = append(out, serverSecretSkip(s))
			}
		}
	case teammem.ReasonPoisoningDetected:
		for _, f := range d.Findings {
			if sent(f.Path) && !slices.ContainsFunc(out, func(s Skip) bool { return s.Key == f.Path }) {
				out = append(out, Skip{Key: f.Path, Kind: SkipPoisoning, RuleID: f.RuleID, Label: f.Label, Line: f.Line})
			}
		}
	case teammem.ReasonEntryTooLarge:
		if sent(d.Key) {
			out = append(out, Skip{Key: d.Key, Kind: SkipTooLarge, Limit: int64(d.MaxEntryBytes)})
		}
	}
	return out
}

// withoutKeys returns upserts minus those skips name.
func withoutKeys(upserts []wire.BatchUpsert, skips []Skip) []wire.BatchUpsert {
	return slices.DeleteFunc(slices.Clone(upserts), func(u wire.BatchUpsert) bool {
		return slices.ContainsFunc(skips, func(s Skip) bool { return s.Key == u.Key })
	})
}

// heldSkips splits a held write's upserts: those its proposal left out
// (secrets under the skip policy, stale copies) are reported as skips, not
// as held; the rest are returned.
func heldSkips(rep *Report, res wire.WriteResult, upserts []wire.BatchUpsert) []wire.BatchUpsert {
	var skips []Skip
	for _, s := range res.SkippedSecrets {
		skips = append(skips, serverSecretSkip(s))
	}
	for _, k := range res.SkippedTombstoned {
		skips = append(skips, Skip{Key: k, Kind: SkipStaleCopy})
	}
	rep.Skipped = append(rep.Skipped, skips...)
	return withoutKeys(upserts, skips)
}
