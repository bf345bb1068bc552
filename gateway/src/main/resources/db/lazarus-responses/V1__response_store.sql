-- The Responses API's stored responses when the policy store is PostgreSQL: every replica can retrieve and
-- continue (previous_response_id) a response another one served. Bounded by lazarus.responses.store-ttl and
-- store-max-entries. doc holds {"response", "context", "input"} as the gateway keeps them.
CREATE TABLE stored_response (
    id         text PRIMARY KEY,
    stored_at  timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    doc        jsonb NOT NULL
);
CREATE INDEX stored_response_stored_at ON stored_response (stored_at);
