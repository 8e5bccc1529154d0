-- The game's database keeps the session settings the driver sends as startup options on a
-- direct connection, so that pooled connections (a transaction pooler takes no startup
-- options) have them too. Run on every start by scripts/cluster and once by
-- post-bootstrap.sh in docker compose; safe to run again.
ALTER DATABASE mockstock SET timezone = 'UTC';
ALTER DATABASE mockstock SET datestyle = 'ISO, YMD';
ALTER DATABASE mockstock SET statement_timeout = '30s';
