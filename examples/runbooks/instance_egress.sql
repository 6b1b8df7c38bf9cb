-- title: External connections of a GCE instance
-- description: Destinations outside the VPC that one instance sent traffic to, with
-- description: first/last seen, number of flows and bytes. Finds C2, mining pools, downloads.
-- param: instance STRING GCE instance name, e.g. web-server-prod-01
-- param: start TIMESTAMP beginning of the window (ISO 8601)
-- param: end TIMESTAMP end of the window (ISO 8601)
SELECT dst_ip, dst_port, protocol, ANY_VALUE(remote_country) AS country,
       MIN(event_time) AS first_seen, MAX(event_time) AS last_seen,
       COUNT(*) AS flows, SUM(bytes_sent) AS bytes_sent
FROM `socbot-sample.logs.vpc_flow_logs`
WHERE src_instance = @instance
  AND dst_instance IS NULL
  AND NOT STARTS_WITH(dst_ip, '10.')
  AND event_time BETWEEN @start AND @end
GROUP BY dst_ip, dst_port, protocol
ORDER BY first_seen DESC
LIMIT 50
