-- Worker range (0010–0019). Group columns of an event row (docs/data-model.md#groups): the properties
-- and creation time of each attached group as they were when the event was ingested.
ALTER TABLE events
    ADD COLUMN IF NOT EXISTS group0_properties String DEFAULT '',
    ADD COLUMN IF NOT EXISTS group1_properties String DEFAULT '',
    ADD COLUMN IF NOT EXISTS group2_properties String DEFAULT '',
    ADD COLUMN IF NOT EXISTS group3_properties String DEFAULT '',
    ADD COLUMN IF NOT EXISTS group4_properties String DEFAULT '',
    ADD COLUMN IF NOT EXISTS group0_created_at DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC'),
    ADD COLUMN IF NOT EXISTS group1_created_at DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC'),
    ADD COLUMN IF NOT EXISTS group2_created_at DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC'),
    ADD COLUMN IF NOT EXISTS group3_created_at DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC'),
    ADD COLUMN IF NOT EXISTS group4_created_at DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC');

-- The worker sends an insert_deduplication_token per batch: an insert retried after a lost
-- answer (the rows did land) is skipped. Non-replicated tables only dedup with a window.
-- Setting the same value again is harmless, so this statement is idempotent.
ALTER TABLE events MODIFY SETTING non_replicated_deduplication_window = 1000;
