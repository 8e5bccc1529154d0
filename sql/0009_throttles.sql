-- Throttle windows replace the per-username login counter: one row per budget key
-- ("login:user:<sha-256 of the lower-cased username>", "login:addr:<address>",
-- "login:all", "register:addr:<address>"), counting attempts in a fixed window.
-- Attempts are counted before the work they guard (a password check), by one
-- conditional upsert, so a burst cannot get past the limit. Usernames are hashed, so
-- a key's size is bounded whatever a client sends, and guessed names are not stored.
DROP TABLE login_failures;

CREATE TABLE throttle_windows (
    key            text PRIMARY KEY CHECK (octet_length(key) BETWEEN 1 AND 100),
    window_start   timestamptz NOT NULL,
    window_seconds integer NOT NULL CHECK (window_seconds > 0),
    hits           integer NOT NULL CHECK (hits >= 0)
);

CREATE INDEX throttle_windows_window_start ON throttle_windows (window_start);
