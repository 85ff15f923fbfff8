-- Persons, their distinct ids and groups: the source of truth for person processing
-- (worker) and for flag evaluation (decide). ClickHouse holds versioned copies.
-- Shapes follow PostHog's posthog_person / posthog_persondistinctid (docs/data-model.md#postgresql-tables).
CREATE TABLE persons (
    id bigserial PRIMARY KEY,
    team_id integer NOT NULL,
    uuid uuid NOT NULL,
    properties jsonb NOT NULL DEFAULT '{}',
    properties_last_updated_at jsonb NOT NULL DEFAULT '{}',
    properties_last_operation jsonb NOT NULL DEFAULT '{}',
    is_identified boolean NOT NULL DEFAULT false,
    version bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (team_id, uuid)
);

CREATE TABLE person_distinct_ids (
    team_id integer NOT NULL,
    distinct_id text NOT NULL,
    person_id bigint NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    version bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (team_id, distinct_id)
);
CREATE INDEX person_distinct_ids_person ON person_distinct_ids (person_id);

-- Distinct ids seen on personless events ($process_person_profile = false), so a
-- later merge knows to write an override (docs/data-model.md#personless-events).
CREATE TABLE personless_distinct_ids (
    team_id integer NOT NULL,
    distinct_id text NOT NULL,
    is_merged boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, distinct_id)
);

-- Group type -> index (0..4) per project, first seen gets the next free index.
CREATE TABLE group_type_mappings (
    team_id integer NOT NULL,
    group_type text NOT NULL,
    group_type_index smallint NOT NULL CHECK (group_type_index BETWEEN 0 AND 4),
    name_singular text,
    name_plural text,
    PRIMARY KEY (team_id, group_type),
    UNIQUE (team_id, group_type_index)
);

CREATE TABLE groups (
    team_id integer NOT NULL,
    group_type_index smallint NOT NULL,
    group_key text NOT NULL,
    group_properties jsonb NOT NULL DEFAULT '{}',
    properties_last_updated_at jsonb NOT NULL DEFAULT '{}',
    properties_last_operation jsonb NOT NULL DEFAULT '{}',
    version bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, group_type_index, group_key)
);

-- ensure_experience_continuity: the hash key a person's flags are bucketed by,
-- written by decide, moved to the surviving person on merge (docs/flags.md#cohorts-dependencies-continuity).
CREATE TABLE feature_flag_hash_key_overrides (
    team_id integer NOT NULL,
    person_id bigint NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    feature_flag_key text NOT NULL,
    hash_key text NOT NULL,
    PRIMARY KEY (team_id, person_id, feature_flag_key)
);
