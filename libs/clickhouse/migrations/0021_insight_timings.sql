-- API range (0020–0029). The web app's time-to-see-data reports (POST /insights/timing), kept
-- for querying how long insights and dashboards take to show data.
CREATE TABLE IF NOT EXISTS insight_timings
(
    team_id Int64,
    user_id Int64,
    created_at DateTime64(3, 'UTC'),
    type String,
    context String,
    status String,
    time_to_see_data_ms Float64,
    insights_fetched UInt32,
    insights_fetched_cached UInt32,
    api_response_bytes UInt64,
    query_id String,
    session_id String,
    current_url String,
    report String
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY (team_id, created_at);
