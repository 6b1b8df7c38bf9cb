"""What a call to Slack may raise that socbot answers by logging or retrying, never by crashing."""

from __future__ import annotations

import aiohttp
from slack_sdk.errors import SlackApiError

SLACK_ERRORS = (SlackApiError, aiohttp.ClientError, TimeoutError)
