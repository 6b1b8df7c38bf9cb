"""The google-genai types the gateway speaks in, made ready once per process.

google-genai's request and response types are pydantic models built lazily on first use
(~50 ms in all): ``build_genai_types`` builds them when a gateway is made, not on the
first call. Each output schema's JSON schema is generated once per class
(``json_schema``).
"""

from __future__ import annotations

import json
from typing import Any

from google.genai import types
from pydantic import BaseModel

# google-genai types every call builds or parses (plus the private request model).
GENAI_TYPES = (
    "GenerateContentConfig AutomaticFunctionCallingConfig ThinkingConfig Tool ToolConfig "
    "FunctionCallingConfig FunctionDeclaration Content UserContent Part FunctionCall "
    "FunctionResponse GenerateContentResponse Candidate GenerateContentResponseUsageMetadata "
    "GenerateContentResponsePromptFeedback ModalityTokenCount HttpResponse "
    "_GenerateContentParameters"
).split()
_schemas: dict[type[BaseModel], str] = {}


def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """``schema.model_json_schema()``, generated once per class; a fresh copy per call."""
    text = _schemas.get(schema)
    if text is None:
        text = _schemas[schema] = json.dumps(schema.model_json_schema())
    value: dict[str, Any] = json.loads(text)
    return value


def build_genai_types() -> None:
    """Build google-genai's lazily built pydantic models now, not on the first call."""
    for name in GENAI_TYPES:
        model = getattr(types, name, None)
        if isinstance(model, type) and issubclass(model, BaseModel):
            model.model_rebuild()
