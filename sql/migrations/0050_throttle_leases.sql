-- A bot key's budget is spent in leases (ThrottleStore.lease, BotBudgets): a server
-- process takes a share of the key's window in one write and counts it down itself, so a
-- bot's request no longer writes here every time. `granted` is how many attempts the
-- row's last lease granted (the upsert's answer; it cannot return the row's old count).
ALTER TABLE throttle_windows ADD COLUMN granted integer NOT NULL DEFAULT 0 CHECK (granted >= 0);
