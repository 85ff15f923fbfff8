-- Messages no pipeline step could ever process, archived from the dead-letter topic so they
-- can be inspected (and replayed) with SQL in every mode.
CREATE TABLE IF NOT EXISTS dead_letters
(
    topic String,
    partition Int32,
    offset String,
    key String,
    value String,
    headers Map(String, String),
    error String,
    created_at DateTime64(3, 'UTC') DEFAULT now64(3, 'UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY (topic, partition, offset)
TTL toDateTime(created_at) + INTERVAL 30 DAY;
