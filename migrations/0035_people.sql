-- People (issue #30): console users with a password (scrypt) or an OpenID Connect
-- identity, a role for the whole instance and roles per app, sessions, and the two-person
-- rule's pending pushes.
CREATE TABLE users (
    id                     bigserial PRIMARY KEY,
    -- Lower-cased; how a person signs in.
    email                  text NOT NULL UNIQUE,
    name                   text NOT NULL DEFAULT '',
    -- PasswordHash text (scrypt$…); NULL: signs in through OpenID Connect only.
    password_hash          text,
    -- admin, operator, author or viewer over every app; NULL: only the apps' roles.
    instance_role          text CHECK (instance_role IN ('admin', 'operator', 'author', 'viewer')),
    -- The OpenID Connect identity bound to the user: issuer, a space, subject.
    oidc_subject           text UNIQUE,
    created_at             timestamptz NOT NULL DEFAULT now(),
    -- A disabled user signs in no more and their sessions stop at once.
    disabled_at            timestamptz
);

CREATE TABLE user_app_roles (
    user_id                bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    app_id                 bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    role                   text NOT NULL CHECK (role IN ('admin', 'operator', 'author', 'viewer')),
    PRIMARY KEY (user_id, app_id)
);
CREATE INDEX user_app_roles_app ON user_app_roles (app_id);

-- A signed-in session: the token (hks_<12 hex>_<48 hex>) is shown once and kept hashed.
CREATE TABLE user_sessions (
    id                     bigserial PRIMARY KEY,
    session_id             text NOT NULL UNIQUE,
    secret_hash            bytea NOT NULL,
    user_id                bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- password or oidc.
    method                 text NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now(),
    expires_at             timestamptz NOT NULL,
    -- When the person last proved it was them (sign-in, or the password again): a
    -- destructive action asks for it within the last few minutes.
    confirmed_at           timestamptz NOT NULL DEFAULT now(),
    address                inet,
    revoked_at             timestamptz
);
CREATE INDEX user_sessions_user ON user_sessions (user_id);

-- The two-person rule: a person's push to more than this many devices (or any push
-- composed by an author) waits for another person's approval. NULL: off.
ALTER TABLE apps ADD COLUMN approval_threshold bigint CHECK (approval_threshold >= 0);

CREATE TABLE push_approvals (
    id                     bigserial PRIMARY KEY,
    app_id                 bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    -- The /v3/push body exactly as composed: what is sent once approved.
    body                   bytea NOT NULL,
    audience_size          bigint NOT NULL,
    -- Who composed it, as the audit log names them (user:<email>, key:hk_…), and the
    -- user when a person did: another person must approve.
    composer               text NOT NULL,
    composer_user          bigint REFERENCES users (id) ON DELETE SET NULL,
    composed_at            timestamptz NOT NULL DEFAULT now(),
    -- pending, approved or rejected (pending past expires_at reads as expired).
    state                  text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'rejected')),
    decider                text,
    decided_at             timestamptz,
    expires_at             timestamptz NOT NULL,
    -- The message the approval sent (NULL while approved but not yet accepted: approving
    -- again sends it, under the same cid).
    msg_id                 text
);
CREATE INDEX push_approvals_app ON push_approvals (app_id, state, id);

-- OpenID Connect sign-ins under way: the state a provider sends back, with the nonce and
-- PKCE verifier it must match. Kept in PostgreSQL so any node may take the callback.
CREATE TABLE oidc_sign_ins (
    state                  text PRIMARY KEY,
    nonce                  text NOT NULL,
    code_verifier          text NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now()
);
