"""Transport envelopes around alerts, taken off before a format is matched.

``unwrap(data)`` returns every layer from the outside in: an SNS notification (also
inside a Lambda ``Records`` event, and SNS inside SNS) or a Pub/Sub push message
(base64 ``data``) is decoded; an EventBridge event (known by its ``detail-type``, with
or without ``source``) gives its ``detail``; a list of findings or alerts
(``Findings``/``findings``, Alertmanager ``alerts``, Graph ``value``, SCC
``listFindingsResults``, Chronicle ``detections``, Okta event hook ``data.events``,
an Azure Event Hubs message's ``records``) gives its first item and counts the others,
as does an API page (CrowdStrike ``resources``, SentinelOne ``data``); a JSON:API
document (Datadog) gives its ``data`` and an Elasticsearch hit its ``_source``. ``raw``
is the payload once transport encodings are decoded (what is stored and shown to the
model); lists and EventBridge events stay whole in it.

Everything here is attacker-controlled: depth and decoded sizes are bounded, and
anything that does not decode to a JSON object ends the unwrapping.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from alerts.json_input import BadJson, loads_object

MAX_DEPTH = 6
MAX_DECODED = 1024 * 1024

JSON = dict[str, Any]


@dataclass
class Unwrapped:
    raw: JSON
    layers: list[JSON]  # outermost first; the alert itself is usually the last
    more: int = 0  # further items in the list the alert was taken from
    more_noun: str = "alert"
    hints: dict[str, Any] = field(default_factory=dict)  # title/time from envelopes
    envelopes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Step:
    inner: JSON
    name: str
    decoded: bool = False  # a transport encoding (raw follows it)
    more: int = 0
    noun: str = "alert"
    hints: dict[str, Any] = field(default_factory=dict)


def unwrap(data: JSON) -> Unwrapped:
    """The layers of ``data`` (never fails; an unknown shape is one layer)."""
    out = Unwrapped(raw=data, layers=[data])
    current = data
    for _ in range(MAX_DEPTH):
        step = next((s for s in (f(current) for f in _UNWRAPPERS) if s is not None), None)
        if step is None:
            break
        if step.decoded and out.raw is current:
            out.raw = step.inner
        if step.more and not out.more:
            out.more, out.more_noun = step.more, step.noun
        for key, value in step.hints.items():
            if value not in (None, ""):
                out.hints.setdefault(key, value)
        out.envelopes.append(step.name)
        out.layers.append(step.inner)
        current = step.inner
    return out


def _json_object(text: Any) -> JSON | None:
    if not isinstance(text, str | bytes) or len(text) > MAX_DECODED:
        return None
    try:  # depth-checked: a nested envelope is as hostile as the body around it
        return loads_object(text, what="an envelope's content")
    except BadJson:
        return None


def _pubsub(data: JSON) -> _Step | None:
    message = data.get("message")
    if not (isinstance(message, dict) and isinstance(message.get("data"), str)):
        return None
    try:
        decoded = base64.b64decode(message["data"], validate=True)
    except (binascii.Error, ValueError):
        return None
    inner = _json_object(decoded)
    if inner is None:
        return None
    hints = {"time": message.get("publishTime") or message.get("publish_time")}
    return _Step(inner, "pubsub", decoded=True, hints=hints)


def _sns(data: JSON) -> _Step | None:
    records = data.get("Records")
    if isinstance(records, list) and records and isinstance(records[0], dict):
        sns = records[0].get("Sns")
        if isinstance(sns, dict):
            data = sns
    if data.get("Type") != "Notification" or "TopicArn" not in data:
        return None
    inner = _json_object(data.get("Message"))
    if inner is None:
        return None
    hints = {"title": data.get("Subject"), "time": data.get("Timestamp")}
    return _Step(inner, "sns", decoded=True, hints=hints)


def _eventbridge(data: JSON) -> _Step | None:
    """An EventBridge event; forwarders (and their tests) often drop ``source``."""
    detail, kind = data.get("detail"), data.get("detail-type")
    if not (isinstance(detail, dict) and detail and isinstance(kind, str) and kind.strip()):
        return None
    hints = {"title": data.get("detail-type"), "time": data.get("time")}
    return _Step(detail, "eventbridge", hints=hints)


_ALERT_KEYS = frozenset({"title", "severity", "category", "name", "rule", "description"})


def _first(data: JSON, key: str, noun: str) -> _Step | None:
    items = data.get(key)
    if not (isinstance(items, list) and items and all(isinstance(i, dict) for i in items)):
        return None
    return _Step(items[0], f"list:{key}", more=len(items) - 1, noun=noun)


def _findings(data: JSON) -> _Step | None:
    if any(k.lower() in _ALERT_KEYS for k in data):
        return None
    return _first(data, "Findings", "finding") or _first(data, "findings", "finding")


def _alertmanager(data: JSON) -> _Step | None:
    items = data.get("alerts")
    if not (isinstance(items, list) and items and isinstance(items[0], dict)):
        return None
    if "labels" not in items[0]:
        return None
    return _first(data, "alerts", "alert")


def _graph_list(data: JSON) -> _Step | None:
    return _first(data, "value", "alert") if "@odata.context" in data else None


def _scc_list(data: JSON) -> _Step | None:
    return _first(data, "listFindingsResults", "finding")


def _azure_records(data: JSON) -> _Step | None:
    """An Azure Event Hubs message or Storage blob: ``{"records": [...]}`` and nothing else
    (Defender XDR streaming, diagnostic settings)."""
    return _first(data, "records", "record") if set(data) == {"records"} else None


def _chronicle_list(data: JSON) -> _Step | None:
    items = data.get("detections")
    if isinstance(items, list) and items and isinstance(items[0], dict):
        if "detection" in items[0]:
            return _first(data, "detections", "detection")
    return None


_PAGING_KEYS = frozenset({"meta", "pagination", "errors", "links", "nextPageToken", "next"})


def _api_list(data: JSON) -> _Step | None:
    """An API page: CrowdStrike ``{"meta", "resources": [...]}``, SentinelOne
    ``{"data": [...], "pagination"}`` — the list beside paging metadata only."""
    for key in ("resources", "data"):
        if isinstance(data.get(key), list) and set(data) - {key} <= _PAGING_KEYS:
            return _first(data, key, "alert")
    return None


def _search_hit(data: JSON) -> _Step | None:
    """An Elasticsearch/OpenSearch hit ``{"_index", "_id", "_source": {...}}``."""
    source = data.get("_source")
    if "_index" in data and isinstance(source, dict) and source:
        return _Step(source, "search-hit")
    return None


def _okta_hook(data: JSON) -> _Step | None:
    inner = data.get("data")
    if data.get("eventType") != "com.okta.event_hook" or not isinstance(inner, dict):
        return None
    return _first(inner, "events", "event")


def _jsonapi(data: JSON) -> _Step | None:
    """A JSON:API document with one resource: ``{"data": {"type", "attributes"}}`` (Datadog)."""
    inner = data.get("data")
    if isinstance(inner, dict) and "type" in inner and isinstance(inner.get("attributes"), dict):
        return _Step(inner, "jsonapi")
    return None


_UNWRAPPERS: list[Callable[[JSON], _Step | None]] = [
    _pubsub,
    _sns,
    _eventbridge,
    _findings,
    _alertmanager,
    _graph_list,
    _scc_list,
    _azure_records,
    _chronicle_list,
    _okta_hook,
    _jsonapi,
    _api_list,
    _search_hit,
]
