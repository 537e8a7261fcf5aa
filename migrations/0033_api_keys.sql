-- API keys (issue #30): many per app, each with a name, scopes, optional client address
-- ranges and expiry, stored hashed; the admin API's keys too (app_id NULL). A key is shown
-- once, at creation; `last_used_at` / `last_used_from` are written at most once a minute.
CREATE TABLE api_keys (
    id                     bigserial PRIMARY KEY,
    -- NULL: an admin key (the whole instance).
    app_id                 bigint REFERENCES apps (id) ON DELETE CASCADE,
    -- The public half of the key, e.g. hk_3f9a0c1d2b4e (hka_… for an admin key).
    key_id                 text NOT NULL UNIQUE,
    name                   text NOT NULL,
    secret_hash            bytea NOT NULL,
    scopes                 text[] NOT NULL,
    -- CIDR ranges the key is used from (IPRange text); NULL: from any address.
    allowed_ranges         text[],
    expires_at             timestamptz,
    created_at             timestamptz NOT NULL DEFAULT now(),
    -- The key this one replaced (`rotate`), if any.
    rotated_from           text,
    revoked_at             timestamptz,
    last_used_at           timestamptz,
    last_used_from         inet
);
CREATE INDEX api_keys_app ON api_keys (app_id, created_at);

-- Whether the JPush-style app_key:master_secret still authenticates (a full-scope legacy
-- key); an app that has moved to scoped keys may switch it off.
ALTER TABLE apps ADD COLUMN master_secret_enabled boolean NOT NULL DEFAULT true;
