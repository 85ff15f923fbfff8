-- Person deletion through the persons API (docs/data-model.md#deleting-persons).

-- The event-deletion tasks the weekly job works through: who asked, when it ran and what it removed.
-- A task is done once done_at is set; started_at / attempts show a run that stopped half-way.
ALTER TABLE queued_deletions
    ADD COLUMN created_by integer,
    -- The distinct ids the person had when deleted: events are found by person id or by these.
    ADD COLUMN distinct_ids text[] NOT NULL DEFAULT '{}',
    ADD COLUMN started_at timestamptz,
    ADD COLUMN attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN events_deleted bigint,
    -- Entries removed from ClickHouse's person tables: the person and each of its distinct ids.
    ADD COLUMN person_rows_deleted integer,
    ADD COLUMN last_error text;
CREATE INDEX queued_deletions_pending_id ON queued_deletions (id) WHERE done_at IS NULL;

-- The highest ClickHouse version a deleted person (by uuid) and a deleted distinct id were
-- written with. A person created again from the same distinct id has the same uuid (a UUIDv5
-- of the project and distinct id), so its first copies are written above these versions, or
-- ClickHouse would keep reading the deletion as the latest row.
CREATE TABLE deleted_person_versions (
    team_id integer NOT NULL,
    uuid uuid NOT NULL,
    version bigint NOT NULL,
    deleted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, uuid)
);

CREATE TABLE deleted_distinct_id_versions (
    team_id integer NOT NULL,
    distinct_id text NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (team_id, distinct_id)
);
