-- Webhook endpoints were claimed by retry time, then by id: an endpoint that wasn't failing
-- sorted first by id alone, so with more endpoints waiting than a node sends to at once
-- (center.webhookConcurrency), the same lowest ids were claimed every round and the rest
-- never were.
--
-- `released_at` is when a node last gave the endpoint back. A claim takes the endpoints
-- that have waited longest: a failing one from its retry time, another from its release
-- (one never claimed first), so every endpoint is served in turn.
ALTER TABLE webhooks ADD COLUMN released_at timestamptz;
