-- Rate limits per app: a token bucket on the push endpoints, shared by every node.
--
-- `apps.rate_limit_per_minute`: the bucket holds that many tokens and refills at that rate
-- per minute; NULL follows the node's default (`api.rateLimit.perMinute`), 0 is unlimited.
ALTER TABLE apps ADD COLUMN rate_limit_per_minute integer CHECK (rate_limit_per_minute >= 0);

-- The bucket of each limited app. A node does not come here for each request: it takes a
-- few tokens at a time (`herald_take_rate_tokens`) and spends them itself, giving back
-- what it did not spend within a second, so every node together never admits more than
-- the bucket held, and a node's requests cost a statement per handful.
CREATE TABLE app_rate_buckets (
    app_id                 bigint PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    tokens                 double precision NOT NULL,
    refilled_at            timestamptz NOT NULL
);

-- Refills the bucket of `p_app` for the time since it was last touched (capacity and rate
-- are the app's limit as the caller knows it), adds back `p_returned` tokens a node did not
-- spend, and takes up to `p_want` whole tokens. Returns how many it took, what is left,
-- and the limit it used. A bucket seen for the first time starts full.
CREATE OR REPLACE FUNCTION herald_take_rate_tokens(
    p_app bigint, p_per_minute integer, p_want integer, p_returned integer,
    OUT granted integer, OUT remaining double precision
) LANGUAGE plpgsql AS $$
DECLARE
    available double precision;
BEGIN
    INSERT INTO app_rate_buckets (app_id, tokens, refilled_at) VALUES (p_app, p_per_minute, now())
    ON CONFLICT (app_id) DO NOTHING;
    SELECT LEAST(p_per_minute::double precision,
                 b.tokens + p_returned + EXTRACT(epoch FROM now() - b.refilled_at) * p_per_minute / 60.0)
    INTO available FROM app_rate_buckets b WHERE b.app_id = p_app FOR UPDATE;
    granted := LEAST(p_want, floor(GREATEST(available, 0))::integer);
    remaining := available - granted;
    UPDATE app_rate_buckets SET tokens = remaining, refilled_at = now() WHERE app_id = p_app;
END
$$;
