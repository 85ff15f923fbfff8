-- What a definition means, written by a person on the definitions page (PostHog keeps it on
-- EnterpriseEventDefinition / EnterprisePropertyDefinition.description). Empty until written.
ALTER TABLE event_definitions ADD COLUMN description text NOT NULL DEFAULT '';
ALTER TABLE property_definitions ADD COLUMN description text NOT NULL DEFAULT '';
