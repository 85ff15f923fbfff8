-- Feature-flag management: organisation roles, per-flag role access (legacy EE) and
-- access controls, the activity log, usage dashboards with their insights, and the
-- experiments a flag can be linked to. Shapes follow PostHog's ee/models/rbac,
-- posthog_activitylog, posthog_dashboard / posthog_dashboardtile / posthog_insight
-- and posthog_experiment (posthog/api/feature_flag.py).

CREATE TABLE roles (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id),
    name text NOT NULL,
    -- Legacy organisation resource access: 21 = can only view, 37 = can always edit.
    feature_flags_access_level smallint NOT NULL DEFAULT 37,
    created_by_id integer REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now()
);
-- PostHog compares role names case-insensitively within an organisation.
CREATE UNIQUE INDEX roles_organization_name ON roles (organization_id, lower(name));

CREATE TABLE role_memberships (
    id uuid PRIMARY KEY,
    role_id uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    user_id integer NOT NULL REFERENCES users (id),
    joined_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (role_id, user_id)
);
CREATE INDEX role_memberships_user ON role_memberships (user_id);

CREATE TABLE feature_flag_role_access (
    id serial PRIMARY KEY,
    feature_flag_id integer NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
    role_id uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    added_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (feature_flag_id, role_id)
);

-- Access controls (PostHog's ee AccessControl). resource_id NULL = the project-wide
-- rule for the resource kind; role_id / user_id NULL = the default for everyone.
-- user_id stands in for PostHog's organization_member (Sightline has no separate
-- membership rows: a user belongs to one organisation).
CREATE TABLE access_controls (
    id uuid PRIMARY KEY,
    team_id integer NOT NULL REFERENCES projects (id),
    resource text NOT NULL,
    resource_id text,
    access_level text NOT NULL,
    role_id uuid REFERENCES roles (id) ON DELETE CASCADE,
    user_id integer REFERENCES users (id),
    created_by_id integer REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (role_id IS NULL OR user_id IS NULL)
);
CREATE UNIQUE INDEX access_controls_subject ON access_controls (
    team_id, resource, coalesce(resource_id, ''), coalesce(role_id::text, ''), coalesce(user_id, 0)
);

-- Every create/update/delete of a logged resource: who, when, and a field-level diff
-- in detail.changes (PostHog's posthog_activitylog).
CREATE TABLE activity_log (
    id uuid PRIMARY KEY,
    team_id integer NOT NULL REFERENCES projects (id),
    organization_id uuid NOT NULL REFERENCES organizations (id),
    user_id integer REFERENCES users (id),
    is_system boolean NOT NULL DEFAULT false,
    scope text NOT NULL,
    item_id text NOT NULL,
    activity text NOT NULL,
    detail jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX activity_log_scope ON activity_log (team_id, scope, created_at DESC);
CREATE INDEX activity_log_item ON activity_log (team_id, scope, item_id, created_at DESC);

CREATE TABLE dashboards (
    id serial PRIMARY KEY,
    team_id integer NOT NULL REFERENCES projects (id),
    name text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    creation_mode text NOT NULL DEFAULT 'default',
    deleted boolean NOT NULL DEFAULT false,
    created_by_id integer REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboards_team ON dashboards (team_id);

-- Saved insights; filters is a legacy trend filter the insights library runs.
CREATE TABLE insights (
    id serial PRIMARY KEY,
    short_id text NOT NULL UNIQUE,
    team_id integer NOT NULL REFERENCES projects (id),
    name text,
    derived_name text,
    description text NOT NULL DEFAULT '',
    filters jsonb NOT NULL DEFAULT '{}',
    query jsonb,
    saved boolean NOT NULL DEFAULT false,
    deleted boolean NOT NULL DEFAULT false,
    created_by_id integer REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX insights_team ON insights (team_id);

CREATE TABLE dashboard_tiles (
    id serial PRIMARY KEY,
    dashboard_id integer NOT NULL REFERENCES dashboards (id) ON DELETE CASCADE,
    insight_id integer NOT NULL REFERENCES insights (id) ON DELETE CASCADE,
    layouts jsonb NOT NULL DEFAULT '{}',
    color text,
    UNIQUE (dashboard_id, insight_id)
);

ALTER TABLE feature_flags
    ADD CONSTRAINT feature_flags_usage_dashboard FOREIGN KEY (usage_dashboard_id) REFERENCES dashboards (id) ON DELETE SET NULL;

-- A flag's analytics_dashboards (PostHog's FeatureFlagDashboards).
CREATE TABLE feature_flag_dashboards (
    feature_flag_id integer NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
    dashboard_id integer NOT NULL REFERENCES dashboards (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (feature_flag_id, dashboard_id)
);

-- Experiments run on a flag: the flag's experiment_set, the list filter type=experiment,
-- and the refusal to soft-delete a flag an active experiment uses.
CREATE TABLE experiments (
    id serial PRIMARY KEY,
    team_id integer NOT NULL REFERENCES projects (id),
    name text NOT NULL,
    description text NOT NULL DEFAULT '',
    feature_flag_id integer NOT NULL REFERENCES feature_flags (id),
    parameters jsonb,
    deleted boolean NOT NULL DEFAULT false,
    created_by_id integer REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX experiments_flag ON experiments (feature_flag_id);
