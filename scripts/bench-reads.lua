-- wrk script for scripts/bench-trade's reads (make bench-reads): one read a bot polls,
-- by random players. BENCH_KEYS lists "token keyId secret" per player; BENCH_READ is
-- portfolio (GET /api/portfolio, bearer token), account (GET /v2/account), positions
-- (GET /v2/positions), quote (GET /v2/stocks/quotes/latest of one of S1..Sn, API key),
-- market (GET /api/stock/market, a page of 20 priced instruments: a read a replica may
-- serve) or healthz (GET /healthz: the HTTP server alone, no database).
local players = {}
for line in io.lines(os.getenv("BENCH_KEYS")) do
    local token, key, secret = line:match("(%S+) (%S+) (%S+)")
    players[#players + 1] = { token = token, key = key, secret = secret }
end
local symbols = tonumber(os.getenv("BENCH_SYMBOLS") or "50")
local read = os.getenv("BENCH_READ")
local paths = { account = "/v2/account", positions = "/v2/positions", healthz = "/healthz", portfolio = "/api/portfolio" }

function init(args)
    math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end

function request()
    local player = players[math.random(#players)]
    if read == "healthz" then return wrk.format("GET", "/healthz") end
    if read == "portfolio" or read == "market" then
        local path = read == "market" and "/api/stock/market?limit=20" or "/api/portfolio"
        return wrk.format("GET", path, { ["Authorization"] = "Bearer " .. player.token })
    end
    local path = paths[read] or string.format("/v2/stocks/quotes/latest?symbols=S%d", math.random(symbols))
    return wrk.format("GET", path, { ["APCA-API-KEY-ID"] = player.key, ["APCA-API-SECRET-KEY"] = player.secret })
end

dofile("scripts/bench-report.lua")
