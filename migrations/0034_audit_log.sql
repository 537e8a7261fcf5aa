-- The audit log (issue #30): who did what, from where, with which outcome: every change
-- made through the API (a push, a recall, a schedule, a key, a setting, a deletion) and
-- every refusal of a key. Append-only (the triggers below refuse UPDATE, DELETE and
-- TRUNCATE) and hash-chained: each row's hash covers the row and the hash before it
-- (AuditChain), so a row altered or removed behind Herald's back breaks the chain at that
-- row (`GET /admin/v1/audit/verify`, `heraldctl audit verify`).
CREATE TABLE audit_log (
    id                     bigserial PRIMARY KEY,
    -- Microseconds since 1970, as hashed.
    at_us                  bigint NOT NULL,
    -- The app acted on; NULL for the instance (the admin API). No foreign key: an entry
    -- outlives its app.
    app_id                 bigint,
    -- master_secret, key:hk_…, admin_token, admin_key:hka_…, or anonymous.
    actor                  text NOT NULL,
    -- The route: method and path template (POST /v3/push).
    action                 text NOT NULL,
    -- The path as asked (POST /v3/keys/hk_…/rotate names the key).
    target                 text NOT NULL,
    status                 integer NOT NULL,
    address                text,
    request_id             text,
    -- SHA-256 of the request body, hex; NULL without one.
    body_digest            text,
    hash                   bytea NOT NULL
);
CREATE INDEX audit_log_app ON audit_log (app_id, id);

CREATE FUNCTION herald_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END $$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION herald_audit_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION herald_audit_append_only();
