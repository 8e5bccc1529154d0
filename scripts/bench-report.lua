-- wrk's summary as shell assignments (wrk_requests=…), for the bench scripts to read:
-- requests, non-2xx answers, socket errors, seconds, p50 and p99 in milliseconds.
-- Loaded by the wrk scripts with dofile, from the repository's root.
function done(summary, latency, requests)
    io.write(string.format("wrk_requests=%d\nwrk_non2xx=%d\nwrk_socket_errors=%d\nwrk_seconds=%.3f\nwrk_p50_ms=%.2f\nwrk_p99_ms=%.2f\n",
        summary.requests, summary.errors.status,
        summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
        summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
