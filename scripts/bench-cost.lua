-- wrk script for scripts/bench-cost: one operation of the capacity plan's mix, sent a
-- fixed number of times (BENCH_COUNT over all threads: each of BENCH_THREADS threads
-- stops after its share of answers). BENCH_PLAYERS lists "token keyId secret" per
-- player; BENCH_OP is one of
--   trade      POST /api/stock/buy (70 %) or /sell of one share (bearer token)
--   order      POST /v2/orders, a market order of one share, 70 % buys (API key)
--   account    GET /v2/account (API key)
--   positions  GET /v2/positions (API key)
--   quote      GET /v2/stocks/quotes/latest of one symbol (API key)
--   portfolio  GET /api/portfolio (bearer token)
--   market     GET /api/stock/market?limit=20 (bearer token)
--   healthz    GET /healthz
--   sql/NAME   GET /sql/NAME (the floor server: operation NAME's statements, bare route)
local players = {}
for line in io.lines(os.getenv("BENCH_PLAYERS")) do
    local token, key, secret = line:match("(%S+) (%S+) (%S+)")
    players[#players + 1] = { token = token, key = key, secret = secret }
end
local symbols = tonumber(os.getenv("BENCH_SYMBOLS") or "50")
local op = os.getenv("BENCH_OP")
local share = math.ceil(tonumber(os.getenv("BENCH_COUNT")) / tonumber(os.getenv("BENCH_THREADS") or "2"))

local counter = 0

function setup(thread)
    thread:set("id", counter)
    counter = counter + 1
end

function init(args)
    math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
    answered = 0
end

local function keyed(method, path, body)
    local player = players[math.random(#players)]
    local headers = { ["APCA-API-KEY-ID"] = player.key, ["APCA-API-SECRET-KEY"] = player.secret }
    if body then headers["Content-Type"] = "application/json" end
    return wrk.format(method, path, headers, body)
end

local function bearer(method, path, body)
    local headers = { ["Authorization"] = "Bearer " .. players[math.random(#players)].token }
    if body then headers["Content-Type"] = "application/json" end
    return wrk.format(method, path, headers, body)
end

function request()
    local symbol = string.format("S%d", math.random(symbols))
    local side = math.random() < 0.7 and "buy" or "sell"
    if op == "trade" then
        return bearer("POST", "/api/stock/" .. side, string.format('{"symbol":"%s","amount":1}', symbol))
    elseif op == "order" then
        return keyed("POST", "/v2/orders",
            string.format('{"symbol":"%s","qty":"1","side":"%s","type":"market","time_in_force":"day"}', symbol, side))
    elseif op == "account" then return keyed("GET", "/v2/account")
    elseif op == "positions" then return keyed("GET", "/v2/positions")
    elseif op == "quote" then return keyed("GET", "/v2/stocks/quotes/latest?symbols=" .. symbol)
    elseif op == "portfolio" then return bearer("GET", "/api/portfolio")
    elseif op == "market" then return bearer("GET", "/api/stock/market?limit=20")
    elseif op:sub(1, 4) == "sql/" then return wrk.format("GET", "/" .. op)
    end
    return wrk.format("GET", "/healthz")
end

-- wrk runs for its whole duration whatever its threads do: a thread that has its share
-- stops and says so in a file (BENCH_DONE with its number), and the script interrupts wrk
-- (SIGINT) once every thread has, which makes it report at once.
function response(status, headers, body)
    answered = answered + 1
    if answered == share then
        local done = io.open(os.getenv("BENCH_DONE") .. id, "w")
        done:close()
        wrk.thread:stop()
    end
end

dofile("scripts/bench-report.lua")
