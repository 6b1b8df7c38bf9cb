"""``socbot doctor``: every set-up check on one line each, with the fix for a failure.
``report`` holds the line format; ``local`` the checks that stay on this machine
(settings, DuckDB files, intel keys, database), ``remote`` those that ask a service
(Gemini, Slack, BigQuery); ``command`` runs them. A new check goes in one of the two."""
