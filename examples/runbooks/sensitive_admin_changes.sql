-- title: Sensitive control-plane changes
-- description: IAM policy changes, service account keys, instance metadata and startup
-- description: scripts, firewall and instance lifecycle calls, with who, from where and result.
-- param: start TIMESTAMP beginning of the window (ISO 8601)
-- param: end TIMESTAMP end of the window (ISO 8601)
SELECT event_time, principal_email, caller_ip, user_agent, method_name, resource_name,
       status_code, request_summary
FROM `socbot-sample.logs.gcp_audit_logs`
WHERE event_time BETWEEN @start AND @end
  AND log_type = 'ADMIN_ACTIVITY'
  AND REGEXP_CONTAINS(method_name,
        r'SetIamPolicy|ServiceAccountKey|setMetadata|firewalls\.(insert|patch|delete)|instances\.(insert|start|stop|delete)')
ORDER BY event_time
LIMIT 100
