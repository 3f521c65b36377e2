package dreamsql

import (
	"context"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// Transitions are teammem.DreamStore's transition methods, written once
// over a driver's Run, which carries out an Update's sequence in one
// transaction. A driver embeds it, with Run set to its own runner.
type Transitions struct {
	Run func(ctx context.Context, orgID int64, id string, u Update) (teammem.Dream, error)
}

// DreamStart moves a pending dream to running within the org's limit.
func (t Transitions) DreamStart(ctx context.Context, orgID int64, id string, p teammem.DreamStartParams) (teammem.Dream, error) {
	u, err := Start(p)
	if err != nil {
		return teammem.Dream{}, err
	}
	return t.Run(ctx, orgID, id, u)
}

// DreamProgress records a heartbeat and usage.
func (t Transitions) DreamProgress(ctx context.Context, orgID int64, id string, p teammem.DreamProgressParams) (teammem.Dream, error) {
	return t.Run(ctx, orgID, id, Progress(p))
}

// DreamFinish ends a running dream.
func (t Transitions) DreamFinish(ctx context.Context, orgID int64, id string, p teammem.DreamFinishParams) (teammem.Dream, error) {
	u, err := Finish(p)
	if err != nil {
		return teammem.Dream{}, err
	}
	return t.Run(ctx, orgID, id, u)
}

// DreamCancel cancels a pending or running dream.
func (t Transitions) DreamCancel(ctx context.Context, orgID int64, id string, at time.Time) (teammem.Dream, error) {
	return t.Run(ctx, orgID, id, Cancel(at))
}

// DreamRelease records that no worker runs a final dream any more.
func (t Transitions) DreamRelease(ctx context.Context, orgID int64, id string, at time.Time) (teammem.Dream, error) {
	return t.Run(ctx, orgID, id, Release(at))
}

// DreamArchive archives a final dream.
func (t Transitions) DreamArchive(ctx context.Context, orgID int64, id string, at time.Time) (teammem.Dream, error) {
	return t.Run(ctx, orgID, id, Archive(at))
}

// DreamOutputSet records a dream's output store once.
func (t Transitions) DreamOutputSet(ctx context.Context, orgID int64, id string, p teammem.DreamOutputParams) (teammem.Dream, error) {
	return t.Run(ctx, orgID, id, OutputSet(p))
}

// DreamReviewProposal links or unlinks a held Apply's proposal.
func (t Transitions) DreamReviewProposal(ctx context.Context, orgID int64, id string, p teammem.DreamProposalParams) (teammem.Dream, error) {
	return t.Run(ctx, orgID, id, ReviewProposal(p))
}

// DreamReviewSet moves a dream's review state.
func (t Transitions) DreamReviewSet(ctx context.Context, orgID int64, id string, p teammem.DreamReviewParams) (teammem.Dream, error) {
	return t.Run(ctx, orgID, id, ReviewSet(p))
}
