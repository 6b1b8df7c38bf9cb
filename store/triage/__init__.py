"""Alerts and their triage: alert rows and states, storms and their posts, the alert
policy's records, suppressions, what a dead replica left behind."""
