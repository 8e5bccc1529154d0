#!/bin/sh
# Patroni's post_bootstrap in docker compose: called with a connection URL to the new primary.
set -e
psql "$1" -v ON_ERROR_STOP=1 <<SQL
CREATE ROLE mockstock LOGIN PASSWORD 'mockstock';
CREATE DATABASE mockstock OWNER mockstock;
SQL
psql "$1" -v ON_ERROR_STOP=1 -f "$(dirname "$0")/database.sql"
