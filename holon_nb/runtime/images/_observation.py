"""The ``visual_reference``, the reply parser and the observation cache of ViewImage (workspace spec §12 rules 7, 8, 12, 13)."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from ...tools._errors import HolonNBError
from ._probe import ImageFacts

__all__ = [
    "OBSERVATION_SCHEMA",
    "ADAPTER_CONTRACT",
    "visual_reference",
    "parse_observation",
    "ObservationError",
    "ObservationCache",
]

#: The observation schema a reply must name (workspace spec §12 rule 12) and part of the cache key (rule 8).
OBSERVATION_SCHEMA = "visual_observation.v1"
#: The adapter contract of the cache key (rule 8).
ADAPTER_CONTRACT = "openai-compatible-image-input.v1"
_ARRAYS = ("ocr", "elements", "relations", "issues", "external_sources")


class ObservationError(HolonNBError, ValueError):
    """A vision reply that is not a ``visual_observation.v1`` object (→ ``vision_observation_failed``)."""


def visual_reference(facts: ImageFacts, created_at: str) -> dict[str, Any]:
    """The ``visual_reference`` of rule 7: ``{type, id: "vis_" + sha256[:16], path, sha256, mime, byte_count,
    size {width, height}, created_at}``."""
    return {
        "type": "visual_reference",
        "id": "vis_" + facts.sha256[:16],
        "path": str(facts.path),
        "sha256": facts.sha256,
        "mime": facts.mime,
        "byte_count": facts.byte_count,
        "size": {"width": facts.width, "height": facts.height},
        "created_at": created_at,
    }


def _json_object(text: str) -> dict[str, Any]:
    candidates = [text.strip()]
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fenced:
        candidates.append(fenced.group(1).strip())
    first, last = text.find("{"), text.rfind("}")
    if first != -1 and last > first:
        candidates.append(text[first : last + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ObservationError("the reply holds no JSON object")


def _array(name: str, value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value]
    if isinstance(value, str) and value.strip():
        return [{"text": value}] if name == "ocr" else [{"description": value}]
    return []


def _strings(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str) and item.strip():
            out.append(item)
        elif isinstance(item, dict):
            text = next(
                (
                    item[k]
                    for k in ("text", "description", "summary", "message")
                    if isinstance(item.get(k), str) and item[k].strip()
                ),
                None,
            )
            if text is not None:
                out.append(text)
    return out


def parse_observation(text: str) -> dict[str, Any]:
    """Parse a vision reply (rule 12): bare JSON, fenced JSON, or the span from the first ``{`` to the last ``}``.

    Returns:
        ``{summary, ocr, elements, relations, issues, external_sources, uncertainties}`` normalised: arrays
        kept, an object → a one-element array, a non-empty string → ``[{text}]`` (``ocr``) or
        ``[{description}]``, other scalars dropped; ``uncertainties`` a list of strings.

    Raises:
        ObservationError: no JSON object, wrong ``type``/``schema``, or an empty ``summary``.
    """
    obj = _json_object(text)
    if obj.get("type") != "visual_observation":
        raise ObservationError(f"type is {obj.get('type')!r}, not 'visual_observation'")
    if obj.get("schema") != OBSERVATION_SCHEMA:
        raise ObservationError(f"schema is {obj.get('schema')!r}, not {OBSERVATION_SCHEMA!r}")
    summary = obj.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise ObservationError("summary is missing or empty")
    out: dict[str, Any] = {"summary": summary.strip()}
    for name in _ARRAYS:
        out[name] = _array(name, obj.get(name))
    out["uncertainties"] = _strings(obj.get("uncertainties"))
    return out


class ObservationCache:
    """In-memory observations of one runtime, keyed by (reference id, prompt, schema, adapter contract) (rule 8).

    Image bytes are never stored (rule 13): only the parsed observation and how it was produced.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[str, str, str, str], dict[str, Any]] = {}

    @staticmethod
    def key(reference_id: str, prompt: str) -> tuple[str, str, str, str]:
        """The cache key of rule 8."""
        return (reference_id, prompt, OBSERVATION_SCHEMA, ADAPTER_CONTRACT)

    def get(self, reference_id: str, prompt: str) -> dict[str, Any] | None:
        """A stored ``{observation, vision_selection}``, or None."""
        with self._lock:
            return self._items.get(self.key(reference_id, prompt))

    def put(self, reference_id: str, prompt: str, entry: dict[str, Any]) -> None:
        """Store ``entry`` (``{observation, vision_selection}``)."""
        with self._lock:
            self._items[self.key(reference_id, prompt)] = entry

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
