-- A push's audit entry is written in the push's own commit (issue #30): accepted means
-- audited, whatever crashes after. It goes here, unchained, so the pushes' commits never
-- wait on the chain's lock; the node's sealer (AuditSealer), every append, every read and
-- every verification move these rows into audit_log in id order, chained.
CREATE TABLE audit_pending (
    id                     bigserial PRIMARY KEY,
    at_us                  bigint NOT NULL,
    app_id                 bigint,
    actor                  text NOT NULL,
    action                 text NOT NULL,
    target                 text NOT NULL,
    status                 integer NOT NULL,
    address                text,
    request_id             text,
    body_digest            text
);
