-- Feature flags and cohorts: written by the management API, read (cached) by flag
-- evaluation. Shapes follow PostHog's posthog_featureflag / posthog_cohort (posthog/api/feature_flag.py).
CREATE TABLE feature_flags (
    id serial PRIMARY KEY,
    team_id integer NOT NULL REFERENCES projects (id),
    key text NOT NULL,
    name text NOT NULL DEFAULT '',
    filters jsonb NOT NULL DEFAULT '{}',
    active boolean NOT NULL DEFAULT true,
    deleted boolean NOT NULL DEFAULT false,
    ensure_experience_continuity boolean NOT NULL DEFAULT false,
    rollback_conditions jsonb,
    performed_rollback boolean NOT NULL DEFAULT false,
    tags text[] NOT NULL DEFAULT '{}',
    creation_context text NOT NULL DEFAULT 'feature_flags',
    evaluation_runtime text NOT NULL DEFAULT 'all',
    version integer NOT NULL DEFAULT 1,
    created_by_id integer REFERENCES users (id),
    last_modified_by_id integer REFERENCES users (id),
    usage_dashboard_id integer,
    has_enriched_analytics boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- A key is unique among the project's non-deleted flags (posthog/api/feature_flag.py).
CREATE UNIQUE INDEX feature_flags_live_key ON feature_flags (team_id, key) WHERE NOT deleted;
CREATE INDEX feature_flags_team ON feature_flags (team_id, created_at DESC);

CREATE TABLE cohorts (
    id serial PRIMARY KEY,
    team_id integer NOT NULL REFERENCES projects (id),
    name text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    filters jsonb,
    is_static boolean NOT NULL DEFAULT false,
    deleted boolean NOT NULL DEFAULT false,
    is_calculating boolean NOT NULL DEFAULT false,
    count integer,
    version integer,
    created_by_id integer REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    last_calculation timestamptz
);
CREATE INDEX cohorts_team ON cohorts (team_id);

-- Members of static cohorts (and materialised members of dynamic ones).
CREATE TABLE cohort_people (
    cohort_id integer NOT NULL REFERENCES cohorts (id) ON DELETE CASCADE,
    person_id bigint NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    version integer,
    PRIMARY KEY (cohort_id, person_id)
);
CREATE INDEX cohort_people_person ON cohort_people (person_id);
