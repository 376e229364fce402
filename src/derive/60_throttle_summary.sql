-- table: ThrottleSummary
-- requires: Throttle
-- Per core and throttle type, plus an "all" row per core: time spent throttled, its
-- fraction of the total time, and the utilisation the throttling allowed over the
-- whole profile (unthrottled time counts as 1.0, a throttled stretch as k/n).
-- Throttle records of one type are taken as non-overlapping.
WITH t AS (
    SELECT coalesce(pcore_idx, 0)::INTEGER AS nc_idx, type, duration, k::DOUBLE / nullif(n, 0) AS lim
    FROM Throttle
),
per AS (
    SELECT nc_idx, type AS throttle_type, sum(duration) AS active, sum(duration * (1 - lim)) AS lost
    FROM t GROUP BY nc_idx, type
    UNION ALL
    SELECT nc_idx, 'all', sum(duration), sum(duration * (1 - lim)) FROM t GROUP BY nc_idx
)
SELECT nc_idx, throttle_type, active AS throttle_active_time_ns,
       active::DOUBLE / nullif((SELECT total_ns FROM nx_Profile), 0) AS throttle_active_time_percent,
       1 - lost / nullif((SELECT total_ns FROM nx_Profile), 0) AS max_achievable_util_with_throttling_percent
FROM per
ORDER BY nc_idx, throttle_type
