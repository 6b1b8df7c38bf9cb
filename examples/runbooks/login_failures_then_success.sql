-- title: Brute force and password spraying followed by a success
-- description: Source IPs with at least 5 failed logins in the window, how many users they
-- description: tried, and which accounts (if any) they then signed in to, with MFA or not.
-- param: start TIMESTAMP beginning of the window (ISO 8601)
-- param: end TIMESTAMP end of the window (ISO 8601)
SELECT src_ip, ANY_VALUE(geo_country) AS country,
       COUNTIF(result = 'FAILURE') AS failures,
       COUNT(DISTINCT IF(result = 'FAILURE', user_name, NULL)) AS users_tried,
       STRING_AGG(DISTINCT IF(result = 'SUCCESS', user_name, NULL), ', ') AS succeeded_as,
       LOGICAL_OR(result = 'SUCCESS' AND NOT mfa) AS success_without_mfa,
       MIN(event_time) AS first_seen, MAX(event_time) AS last_seen
FROM `socbot-sample.logs.auth_logs`
WHERE event_time BETWEEN @start AND @end
GROUP BY src_ip
HAVING COUNTIF(result = 'FAILURE') >= 5
ORDER BY failures DESC
LIMIT 50
