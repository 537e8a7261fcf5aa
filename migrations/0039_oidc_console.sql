-- A sign-in through the OpenID Connect provider started from the web console (issue #31):
-- its callback sets the console's session cookie and sends the browser to the console,
-- instead of answering the session as JSON.
ALTER TABLE oidc_sign_ins ADD COLUMN console boolean NOT NULL DEFAULT false;
