# MockStock — `make run` to play, `make test` to check.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

SWIFT ?= swift
# `make run` serves an optimised build: scrypt at full cost takes ~0.35 s per login
# optimised and ~3 s unoptimised. CONFIG=debug builds faster for quick iterations.
CONFIG ?= release
PG_LOCAL := scripts/pg-local

.PHONY: all build run admin migrate test test-browser test-bots test-reliability cluster cluster-stop test-cluster bench bench-scale bench-pooling bench-replication bench-reads bench-driver bench-seed bench-leaderboard bench-orders bench-stream bench-history db-start db-stop db-destroy deps clean

all: build

deps:
	@scripts/install-deps

build: deps
	$(SWIFT) build -c $(CONFIG) --product mockstock

DEMO_SEED := --instruments data/sp500-constituents.csv --instruments data/extra-instruments.csv \
	--prices data/demo-prices-daily.csv.gz --fx data/ecb-fx-daily.csv.gz

# Starts the embedded PostgreSQL under .data/ unless DATABASE_URL points elsewhere,
# keeps a generated JWT secret in .data/jwt-secret unless JWT_SECRET is set, seeds the
# demo market when the database has none (its three real years moved to end yesterday,
# see docs/market.md), then serves a simulated market (unless
# QUOTE_PROVIDER says otherwise); migrations run at start-up.
run: build
	@if [ -z "$$DATABASE_URL" ]; then $(PG_LOCAL) start dev; export DATABASE_URL="$$($(PG_LOCAL) url dev)"; fi; \
	if [ -z "$$JWT_SECRET" ]; then \
		mkdir -p .data; [ -s .data/jwt-secret ] || (umask 077; head -c 48 /dev/urandom | base64 -w0 > .data/jwt-secret); \
		export JWT_SECRET="$$(cat .data/jwt-secret)"; \
	fi; \
	.build/$(CONFIG)/mockstock seed --if-empty --recent $(DEMO_SEED) || exit 1; \
	export QUOTE_PROVIDER="$${QUOTE_PROVIDER:-simulated}"; \
	exec .build/$(CONFIG)/mockstock serve

# Creates an admin, or makes an existing player one (asking before it changes their
# password), on the database `make run` uses: `make admin` or `make admin NAME=alice`.
admin: build
	@if [ -z "$$DATABASE_URL" ]; then $(PG_LOCAL) start dev; export DATABASE_URL="$$($(PG_LOCAL) url dev)"; fi; \
	.build/$(CONFIG)/mockstock admin create $(if $(NAME),--username $(NAME))

migrate: build
	@if [ -z "$$DATABASE_URL" ]; then $(PG_LOCAL) start dev; export DATABASE_URL="$$($(PG_LOCAL) url dev)"; fi; \
	.build/$(CONFIG)/mockstock migrate

# Checks that every rule has one owner (scripts/check-rules over docs/rules.md, and the
# check's own tests), builds, starts a throwaway cluster, runs every test, the
# schema-layout check (scripts/test-schema-upgrade) and the first-run check
# (scripts/test-first-run), and removes the cluster even when tests fail.
test: deps
	scripts/check-cluster-config
	scripts/check-rules
	python3 -m unittest Tests/rules/test_check_rules.py Tests/browser/test_modules.py
	$(SWIFT) build --build-tests
	@$(PG_LOCAL) destroy test; \
	PG_LOCAL_FSYNC=off $(PG_LOCAL) start test || exit 1; \
	export TEST_DATABASE_URL="$$($(PG_LOCAL) url test)"; \
	$(SWIFT) test --skip-build && scripts/test-schema-upgrade && scripts/test-first-run; status=$$?; \
	$(PG_LOCAL) destroy test; exit $$status

# The web client in headless Chromium (selenium) against a server with the demo market;
# screenshots of each main screen in .build/screenshots.
test-browser: deps
	scripts/test-browser

# The official Alpaca SDK (alpaca-py, pinned) against a live server.
test-bots: deps
	scripts/test-bots

# Invariants under load, races, kill -9, database restarts, hostile input, schemathesis
# (RELIABILITY_PROFILE=full for the long run); see docs/RELIABILITY.md.
test-reliability: deps
	scripts/test-reliability

# The game on a cluster, on loopback: three servers behind HAProxy (HTTP and both streams),
# pgbouncer in transaction mode, a PostgreSQL primary and a synchronous replica run by
# Patroni with etcd; http://127.0.0.1:8090/. `make cluster-stop` stops it; see docs/SCALING.md.
cluster: build
	scripts/cluster start
	scripts/cluster status

cluster-stop:
	scripts/cluster stop

# Kills a server, pgbouncer, the replica and the primary of a cluster under load and
# checks that nothing acknowledged is lost (docs/RELIABILITY.md).
test-cluster: deps
	scripts/test-cluster

# Buys and sells over HTTP with wrk beside pgbench running the same statements.
bench:
	@scripts/install-deps bench
	scripts/bench-trade

# The trading mix straight to PostgreSQL with prepared statements, with unnamed ones
# (DATABASE_POOL_MODE=transaction), and through pgbouncer in transaction mode, twice each
# in turn: what transaction pooling costs, and the CPU and WAL per trade (docs/SCALING.md).
bench-pooling:
	@scripts/install-deps bench
	BENCH_MODES="session transaction pgbouncer session transaction pgbouncer" BENCH_SECONDS=$${BENCH_SECONDS:-15} scripts/bench-trade

# What the synchronous replica costs a commit: pgbench's write transaction on the local
# cluster's primary with synchronous_commit local, on and remote_apply in turn.
bench-replication:
	scripts/bench-replication

# The same trading mix at 16, 32, 64, 128 and 256 connections against one server: does
# throughput hold as connections grow?
bench-scale:
	@scripts/install-deps bench
	BENCH_SCALE="16 32 64 128 256" scripts/bench-trade

bench-reads:
	@scripts/install-deps bench
	BENCH_READS=1 scripts/bench-trade

# CPU time per request of each operation of the capacity plan's mix, server and PostgreSQL
# apart, in floors measured in the same run (a bare Hummingbird app, pgbench -S, the
# minimal trade); five rounds, alternating with BENCH_SERVER's build when given.
bench-cost:
	@scripts/install-deps bench
	scripts/bench-cost

# Point selects through the driver's pool beside pgbench on the same cluster.
bench-driver:
	@scripts/install-deps bench
	scripts/bench-driver

# The S&P 500 history through psql \copy, mockstock seed and the admin upload route.
bench-seed:
	@scripts/install-deps bench
	scripts/bench-seed

# First leaderboard pages of a 100,000-member and a 1,000-member league (both from
# snapshots) over HTTP while prices move, beside the aggregation query behind them.
bench-leaderboard:
	@scripts/install-deps bench
	scripts/bench-leaderboard

# 10,000 open limit orders over 500 symbols; one price move crosses half of them: fills/s
# and the time from the prices being stored to the last fill, beside pgbench.
bench-orders:
	@scripts/install-deps bench
	scripts/bench-orders

# Two server processes, 5,000 stream clients each following 20 symbols of a market that
# ticks every second: delivered events/s, tick-to-client latency p50/p99, server memory.
bench-stream:
	@scripts/install-deps bench
	scripts/bench-stream

# Five years of daily trading (2,000 trades): the value-history route by day and by month
# beside GET /api/portfolio.
bench-history:
	@scripts/install-deps bench
	scripts/bench-history

db-start:
	$(PG_LOCAL) start dev

db-stop:
	$(PG_LOCAL) stop dev

db-destroy:
	$(PG_LOCAL) destroy dev

clean:
	rm -rf .build
