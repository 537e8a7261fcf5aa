-- One name per concept. In every table `message_id` is the row id of `messages` (bigint)
-- and `msg_id` the public message id the API answers with (text): the inbox's column held
-- the latter under the former's name.
ALTER TABLE device_messages RENAME COLUMN message_id TO msg_id;

-- Written by the gateway on every connect and disconnect and read by nothing: which node
-- holds a device comes back with the cluster, fenced by a session epoch.
DROP TABLE device_presence;
