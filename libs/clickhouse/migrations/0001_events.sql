-- Events, one row per ingested event. ReplacingMergeTree over a key that contains the uuid:
-- a redelivered event (same uuid, same row) collapses; queries that must be exact read FINAL.
CREATE TABLE IF NOT EXISTS events
(
    uuid UUID,
    event String,
    properties String,
    timestamp DateTime64(6, 'UTC'),
    team_id Int64,
    distinct_id String,
    elements_chain String DEFAULT '',
    created_at DateTime64(6, 'UTC'),
    person_id UUID,
    person_created_at DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC'),
    person_properties String DEFAULT '',
    person_mode Enum8('full' = 0, 'propertyless' = 1, 'force_upgrade' = 2) DEFAULT 'full',
    inserted_at DateTime64(6, 'UTC') DEFAULT now64(6, 'UTC')
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid));

-- Persons as versioned copies of the PostgreSQL truth: read with argMax(…, version).
CREATE TABLE IF NOT EXISTS person
(
    id UUID,
    created_at DateTime64(3, 'UTC'),
    team_id Int64,
    properties String,
    is_identified Int8,
    is_deleted Int8 DEFAULT 0,
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, id);

CREATE TABLE IF NOT EXISTS person_distinct_id2
(
    team_id Int64,
    distinct_id String,
    person_id UUID,
    is_deleted Int8 DEFAULT 0,
    version Int64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, distinct_id);

CREATE TABLE IF NOT EXISTS groups
(
    group_type_index UInt8,
    group_key String,
    created_at DateTime64(3, 'UTC'),
    team_id Int64,
    group_properties String,
    is_deleted Bool DEFAULT false,
    version UInt64 DEFAULT 0
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, group_type_index, group_key);
