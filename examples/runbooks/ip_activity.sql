-- title: Activity of an IP address across all log tables
-- description: For one IP, per table and action: first and last time seen, number of
-- description: events, the principals involved and the outcomes. Start here for an IP
-- description: from an alert.
-- param: ip STRING the IPv4/IPv6 address to look for
-- param: start TIMESTAMP beginning of the window (ISO 8601)
-- param: end TIMESTAMP end of the window (ISO 8601)
WITH events AS (
  SELECT 'gcp_audit_logs' AS source, event_time, method_name AS action,
         principal_email AS who, CAST(status_code AS STRING) AS outcome
  FROM `socbot-sample.logs.gcp_audit_logs`
  WHERE caller_ip = @ip AND event_time BETWEEN @start AND @end
  UNION ALL
  SELECT 'auth_logs', event_time, CONCAT(source, ' login'), user_name, result
  FROM `socbot-sample.logs.auth_logs`
  WHERE src_ip = @ip AND event_time BETWEEN @start AND @end
  UNION ALL
  SELECT 'vpc_flow_logs', event_time,
         CONCAT(IF(src_ip = @ip, 'to ', 'from '), COALESCE(dst_instance, src_instance, '?'),
                ' port ', CAST(dst_port AS STRING)),
         COALESCE(dst_instance, src_instance), CONCAT(CAST(bytes_sent AS STRING), ' bytes')
  FROM `socbot-sample.logs.vpc_flow_logs`
  WHERE (src_ip = @ip OR dst_ip = @ip) AND event_time BETWEEN @start AND @end
)
SELECT source, action, COUNT(*) AS events, MIN(event_time) AS first_seen,
       MAX(event_time) AS last_seen, STRING_AGG(DISTINCT who, ', ') AS principals,
       IF(source = 'vpc_flow_logs', NULL, STRING_AGG(DISTINCT outcome, ', ')) AS outcomes
FROM events
GROUP BY source, action
ORDER BY first_seen
LIMIT 100
