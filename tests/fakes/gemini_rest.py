"""The Gemini REST API on respx, with explicit context caches, for the real google-genai
client (``GeminiBackend``): the network edge, nothing of socbot's replaced.

``generateContent`` answers ``text`` with ``usageMetadata`` computed from what was
received (``bench.fake_gemini.parse_request``: about 4 characters per token of the system
instruction, tools and contents); a request naming ``cachedContent`` is read as the cached
system instruction followed by the request, and its tokens are reported as
``cachedContentTokenCount``. ``cachedContents`` create / get / patch / delete are
``bench.cached_contents.CachedContents`` (``store``), which records every call::

    gemini = GeminiREST(router)
    ...
    assert gemini.store.calls == [("create", "cachedContents/fake1")]

``respond`` answers instead of ``text``: a function of the model and the request body
(a cached system instruction already put back in) returning the answer's candidate
content (``{"role": "model", "parts": [...]}``), e.g. a ``ScriptedModel``'s turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import respx

from bench.cached_contents import CachedContents, RestError
from bench.fake_gemini import FAKE_SIGNATURE, parse_request, tokens
from bench.thought_signatures import signature_problem

API = "https://generativelanguage.googleapis.com/v1beta"


class GeminiREST:
    """Routes on ``router`` for generateContent and cachedContents; records bodies."""

    def __init__(
        self,
        router: respx.MockRouter,
        *,
        store: CachedContents | None = None,
        text: str = "ok",
        respond: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.store = store if store is not None else CachedContents()
        self.text = text
        self.respond = respond
        self.generated: list[dict[str, Any]] = []  # generateContent bodies, as received
        self.generate = router.post(url__regex=rf"^{API}/models/(?P<model>[^/:]+):generateContent$")
        self.generate.side_effect = self._generate
        self.caches = router.route(url__regex=rf"^{API}/cachedContents(?P<rest>/[^/?]+)?(\?.*)?$")
        self.caches.side_effect = self._caches

    def _generate(self, request: httpx.Request, model: str) -> httpx.Response:
        body = json.loads(request.content)
        self.generated.append(body)
        problem = signature_problem(model, body, FAKE_SIGNATURE)
        if problem is not None:  # Gemini 3 refuses a call turn whose signature was dropped
            error = {"code": 400, "message": problem, "status": "INVALID_ARGUMENT"}
            return httpx.Response(400, json={"error": error})
        cached = 0
        if body.get("cachedContent"):
            try:
                body, cached = self.store.resolve(model, body)
            except RestError as exc:
                return httpx.Response(exc.code, json=exc.body)
        content = (
            self.respond(model, body)
            if self.respond is not None
            else {"role": "model", "parts": [{"text": self.text}]}
        )
        prompt = tokens(parse_request(model, body).prompt_chars)
        usage: dict[str, Any] = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": 3,
            "totalTokenCount": prompt + 3,
        }
        if cached:
            usage["cachedContentTokenCount"] = cached
        answer = {
            "candidates": [
                {
                    "content": content,
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": usage,
            "modelVersion": model,
            "responseId": f"fake-{len(self.generated)}",
        }
        return httpx.Response(200, json=answer)

    def _caches(self, request: httpx.Request, rest: str | None) -> httpx.Response:
        name = f"cachedContents{rest}" if rest else ""
        body = json.loads(request.content) if request.content else {}
        try:
            answer = self.store.handle(request.method, name, body)
        except RestError as exc:
            return httpx.Response(exc.code, json=exc.body)
        return httpx.Response(200, json=answer)
