-- What the group types API answers beside the names (PostHog's GroupTypeMapping): the columns the
-- web app shows in a type's groups list, and when the type was first seen. Types mapped before
-- this migration keep a null created_at, as PostHog answers for its older mappings.
ALTER TABLE group_type_mappings ADD COLUMN default_columns jsonb;
ALTER TABLE group_type_mappings ADD COLUMN created_at timestamptz;
ALTER TABLE group_type_mappings ALTER COLUMN created_at SET DEFAULT now();
