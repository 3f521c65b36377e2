-- Dreams (issue 24): one row per dream; the row is the truth of its status, and every
-- transition is a conditional update. Space ids carry no foreign key: deleting a store keeps
-- the record of the dreams that read or wrote it. session_ids is a JSON array (null: the
-- request had no sessions input), base the input's entry checksums at start (JSON object).
CREATE TABLE dreams (
    id                          TEXT        PRIMARY KEY,
    org_id                      BIGINT      NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    input_space_id              BIGINT      NOT NULL,
    input_store_uid             TEXT        NOT NULL,
    input_owner_id              BIGINT      NOT NULL DEFAULT 0,
    output_space_id             BIGINT      NOT NULL DEFAULT 0,
    output_store_uid            TEXT        NOT NULL DEFAULT '',
    session_ids                 TEXT        NOT NULL DEFAULT 'null',
    model                       TEXT        NOT NULL,
    model_speed                 TEXT        NOT NULL DEFAULT 'standard',
    instructions                TEXT        NOT NULL DEFAULT '',
    behavior                    TEXT        NOT NULL CHECK (behavior IN ('create_new', 'update_existing')),
    status                      TEXT        NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed', 'canceled')),
    error_type                  TEXT        NOT NULL DEFAULT '',
    error_message               TEXT        NOT NULL DEFAULT '',
    input_tokens                BIGINT      NOT NULL DEFAULT 0,
    output_tokens               BIGINT      NOT NULL DEFAULT 0,
    cache_creation_input_tokens BIGINT      NOT NULL DEFAULT 0,
    cache_read_input_tokens     BIGINT      NOT NULL DEFAULT 0,
    run_session_id              TEXT        NOT NULL DEFAULT '',
    created_at                  TIMESTAMPTZ NOT NULL,
    started_at                  TIMESTAMPTZ,
    ended_at                    TIMESTAMPTZ,
    archived_at                 TIMESTAMPTZ,
    released_at                 TIMESTAMPTZ,
    heartbeat_at                TIMESTAMPTZ,
    creator_user_id             BIGINT      NOT NULL DEFAULT 0,
    creator_key_id              TEXT        NOT NULL DEFAULT '',
    base                        TEXT        NOT NULL DEFAULT '{}',
    review_state                TEXT        NOT NULL DEFAULT 'none' CHECK (review_state IN ('none', 'pending', 'applied', 'discarded')),
    review_at                   TIMESTAMPTZ,
    review_by                   BIGINT      NOT NULL DEFAULT 0
);
-- Lists: an org's dreams newest first.
CREATE INDEX dreams_org_created ON dreams (org_id, created_at, id);
-- An update_existing dream holds its store until its worker fully stopped: at most one such
-- dream per store, enforced by the database so that two creates cannot both pass.
CREATE UNIQUE INDEX dreams_store_held ON dreams (input_space_id) WHERE behavior = 'update_existing' AND released_at IS NULL;
-- The reaper and the re-enqueue scan, across orgs.
CREATE INDEX dreams_status ON dreams (status, heartbeat_at);
