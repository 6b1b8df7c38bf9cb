"""``socbot serve``: the command, the acknowledging process, log set-up, Slack checks."""
