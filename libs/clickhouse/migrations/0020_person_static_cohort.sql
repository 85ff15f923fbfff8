-- API range (0020–0029). Members of static cohorts, copied from PostgreSQL's cohort_people
-- (by person uuid) when they are added or removed, so queries can test membership in
-- ClickHouse. The latest version of a (cohort, person) row wins; is_deleted = 1 removes it.
CREATE TABLE IF NOT EXISTS person_static_cohort
(
    team_id Int64,
    cohort_id Int64,
    person_id UUID,
    is_deleted Int8 DEFAULT 0,
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, cohort_id, person_id);
