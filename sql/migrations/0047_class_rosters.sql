-- Class rosters: accounts a league's host creates for a class, without e-mail. A managed
-- account has the display name the host typed (shown in the host's leagues) and the host
-- who manages it; the host may reset its password and erase it. When the host's own
-- account is erased, their students' accounts stay, managed by no one.
ALTER TABLE users
    ADD COLUMN display_name text CHECK (length(display_name) BETWEEN 1 AND 64),
    ADD COLUMN managed_by bigint REFERENCES users (id) ON DELETE SET NULL,
    ADD CONSTRAINT users_managed_named CHECK (managed_by IS NULL OR display_name IS NOT NULL);
CREATE INDEX users_managed_by ON users (managed_by) WHERE managed_by IS NOT NULL;
