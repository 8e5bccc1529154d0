#!/bin/sh
# Patroni's post_bootstrap: called with a connection URL to the new primary.
set -e
psql "$1" -v ON_ERROR_STOP=1 <<SQL
CREATE ROLE mockstock LOGIN PASSWORD 'mockstock';
CREATE DATABASE mockstock OWNER mockstock;
ALTER DATABASE mockstock SET timezone = 'UTC';
ALTER DATABASE mockstock SET datestyle = 'ISO, YMD';
ALTER DATABASE mockstock SET statement_timeout = '30s';
SQL
