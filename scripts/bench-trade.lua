-- wrk script for scripts/bench-trade: random buys (70%) and sales (30%) of one share
-- of S1..Sn by random players, each with their own token, over keep-alive connections.
-- BENCH_BUY_SHARE (default 0.7) is the share of buys.
-- A line of BENCH_TOKENS is a token, or a token and the portfolio id it trades (BENCH_RULES).
local tokens, portfolios = {}, {}
for line in io.lines(os.getenv("BENCH_TOKENS")) do
    local token, portfolio = line:match("^(%S+)%s*(%d*)$")
    tokens[#tokens + 1] = token
    portfolios[#portfolios + 1] = portfolio
end
local symbols = tonumber(os.getenv("BENCH_SYMBOLS") or "50")
local buy_share = tonumber(os.getenv("BENCH_BUY_SHARE") or "0.7")

function init(args)
    math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end

function request()
    local side = math.random() < buy_share and "buy" or "sell"
    local player = math.random(#tokens)
    local seat = portfolios[player] ~= "" and string.format(',"portfolioId":%s', portfolios[player]) or ""
    local body = string.format('{"symbol":"S%d","amount":%d%s}', math.random(symbols), 1, seat)
    return wrk.format("POST", "/api/stock/" .. side, {
        ["Content-Type"] = "application/json",
        ["Authorization"] = "Bearer " .. tokens[player],
    }, body)
end

dofile("scripts/bench-report.lua")
