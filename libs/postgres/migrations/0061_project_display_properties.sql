-- Which person properties name a person in lists (PostHog's Team.person_display_name_properties);
-- null: the defaults (email, name, username).
ALTER TABLE projects ADD COLUMN IF NOT EXISTS person_display_name_properties text[];
