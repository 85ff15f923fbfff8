-- Event and property definitions: every event name and property key the worker has seen per
-- project, for pickers and the definitions API (PostHog's EventDefinition and PropertyDefinition).
-- volume counts the events seen; a batch the bus delivers again counts again, so it is a close
-- estimate, not an exact count (queries count exactly).
CREATE TABLE event_definitions (
    id serial PRIMARY KEY,
    team_id integer NOT NULL,
    name text NOT NULL,
    volume bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (team_id, name)
);

-- type: 1 event property, 2 person property (PostHog's PropertyDefinition.Type numbering).
-- property_type: String, Numeric, Boolean or DateTime, inferred from the first value seen and then
-- kept, as PostHog keeps it; null for objects, lists and nulls.
CREATE TABLE property_definitions (
    id serial PRIMARY KEY,
    team_id integer NOT NULL,
    name text NOT NULL,
    type smallint NOT NULL,
    property_type text,
    volume bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (team_id, type, name)
);
