package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// NightlyEvery is how often the leader looks for nightly dreams that are due.
const NightlyEvery = 5 * time.Minute

// NightlyGap is the least time between two dreams of one team store.
const NightlyGap = 24 * time.Hour

// Enqueuer runs dreams: the method of httpapi.DreamRunner the nightly job
// needs (cmd/server passes the dream worker's runner).
type Enqueuer interface {
	// Enqueue asks for d, just created pending, to be run.
	Enqueue(ctx context.Context, d teammem.Dream) error
}

// NightlyConfig is what the nightly dreams need.
type NightlyConfig struct {
	Store    teammem.Store
	Enqueuer Enqueuer
	// Models are the models dreams may use; the first is the nightly
	// dreams'. None: the job does nothing (and says so once).
	Models []string
	Window Window
	// Created, when not nil, is told of each dream the job created (not of
	// one another run or replica created first), so that nightly dreams
	// count in teammem_dreams_created_total as the API's creates do:
	// cmd/server passes the metric's increment.
	Created func(org teammem.Org)
	Now     func() time.Time // nil: time.Now
	Log     *slog.Logger
}

// Nightly creates the nightly dreams of team stores whose repo's team_dream
// is nightly, once each is due (Run).
type Nightly struct {
	cfg     NightlyConfig
	noModel sync.Once
}

// NewNightly returns the nightly dreams of cfg.
func NewNightly(cfg NightlyConfig) *Nightly {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Nightly{cfg: cfg}
}

// NightlyDreamID is the id of the nightly dream of a team space on a UTC
// date ("2006-01-02"): derived from them, so however many times and on
// however many replicas the job runs, the store refuses a second dream of
// that store that night (a duplicate id, EConflict).
func NightlyDreamID(orgID, spaceID int64, date string) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "nightly\x00%d\x00%d\x00%s", orgID, spaceID, date))
	return teammem.DreamIDPrefix + hex.EncodeToString(sum[:16])
}

// Run creates and enqueues every nightly dream due now. It goes on past
// an org that fails and returns the first error.
func (n *Nightly) Run(ctx context.Context) error {
	if len(n.cfg.Models) == 0 {
		n.noModel.Do(func() {
			n.cfg.Log.WarnContext(ctx, "nightly dreams are off: the server has no model (set TEAMMEM_LLM_PROVIDER and TEAMMEM_LLM_MODEL)")
		})
		return nil
	}
	orgs, err := n.cfg.Store.OrgList(ctx)
	if err != nil {
		return fmt.Errorf("nightly dreams: %w", err)
	}
	var first error
	for _, org := range orgs {
		if err := n.org(ctx, org); err != nil {
			n.cfg.Log.ErrorContext(ctx, "nightly dreams failed", "org", org.Slug, "error", err.Error())
			first = cmpOr(first, err)
		}
	}
	return first
}

// org creates the nightly dreams due in org.
func (n *Nightly) org(ctx context.Context, org teammem.Org) error {
	repos, err := n.cfg.Store.RepoList(ctx, org.ID)
	if err != nil {
		return err
	}
	now := n.cfg.Now().UTC()
	var owner teammem.User
	for _, r := range repos {
		if r.Store || r.Team.ID == 0 || org.Settings.TeamDreamFor(r.Slug) != teammem.TeamDreamNightly || now.Before(n.cfg.Window.Minute(org.ID, r.Slug, now)) {
			continue
		}
		due, err := n.due(ctx, org, r.Team, now)
		if err != nil {
			return err
		}
		if !due {
			continue
		}
		if owner.ID == 0 {
			if owner, err = firstOwner(ctx, n.cfg.Store, org.ID); err != nil {
				return err
			}
		}
		if err := n.create(ctx, org, r, owner, now); err != nil {
			return err
		}
	}
	return nil
}

// firstOwner is the org's first active owner (lowest id), in whose name
// nightly dreams are created and audited.
func firstOwner(ctx context.Context, st teammem.Store, orgID int64) (teammem.User, error) {
	users, err := st.UserList(ctx, orgID)
	if err != nil {
		return teammem.User{}, err
	}
	slices.SortFunc(users, func(a, b teammem.User) int { return int(a.ID - b.ID) })
	for _, u := range users {
		if u.ActiveOwner() {
			return u, nil
		}
	}
	return teammem.User{}, teammem.Errorf(teammem.EConflict, "org %d has no active owner to create its nightly dreams", orgID)
}
