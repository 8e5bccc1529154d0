-- wrk script for scripts/bench-orders: places the orders listed in BENCH_ORDERS (one
-- "token symbol limit" line each) through POST /api/orders, each once. Thread k of n
-- (BENCH_THREADS) takes lines k, k+n, ...; each order carries a clientOrderId, so a
-- line sent again (a thread goes round its lines until every one was answered 201) is
-- answered with the order already placed and places nothing twice.
local orders = {}
for line in io.lines(os.getenv("BENCH_ORDERS")) do orders[#orders + 1] = line end
local threads = tonumber(os.getenv("BENCH_THREADS") or "2")
local counter = 0

function setup(thread)
    thread:set("id", counter)
    counter = counter + 1
end

function init(args)
    mine = {}
    for index = id + 1, #orders, threads do mine[#mine + 1] = index end
    next_index, created = 1, 0
end

function request()
    local index = mine[next_index]
    next_index = next_index % #mine + 1
    local token, symbol, limit = orders[index]:match("(%S+) (%S+) (%S+)")
    local body = string.format(
        '{"symbol":"S%s","side":"buy","quantity":1,"type":"limit","limitPrice":"%s","timeInForce":"gtc","clientOrderId":"bench-%d"}',
        symbol, limit, index)
    return wrk.format("POST", "/api/orders", {
        ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token,
    }, body)
end

function response(status, headers, body)
    if status == 201 then
        created = created + 1
        if created == #mine then wrk.thread:stop() end
    end
end

dofile("scripts/bench-report.lua")
