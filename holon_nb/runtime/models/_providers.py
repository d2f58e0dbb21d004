"""Which provider a turn talks to: installed providers, scripted fixtures, the factory, the lineage.

``rt.providers`` is a :class:`ProviderRegistry`. Resolution of a model ref (turn-loop spec §1.2,
§2.2, §2.3, §4.2), first match wins:

1. a provider installed for that ref: ``rt.providers.register("scripted@default/scripted", p)``
   (tests and notebooks; the ref is matched as given and in its canonical form);
2. a ``scripted`` ref loads a script file (YAML or JSON, :func:`~holon_nb.providers.scripted.load_script`):
   ``scripted@default/<path>`` or ``scripted/<path>`` when the model part ends in ``.yaml``, ``.yml`` or
   ``.json`` (relative paths from the runtime's workspace), else the file named by ``$HOLON_NB_SCRIPT``.
   The loaded provider is installed for that ref, so later turns continue the same script
   (``rt.providers.unregister(ref)`` starts it over);
3. ``holon_nb.providers._factory.build_provider(ref)`` (real transports; keys and base URLs from the
   environment, custom providers from ``$HOLON_NB_PROVIDERS`` and ``rt.settings.providers``, see
   :func:`~holon_nb.runtime.models._catalog.provider_config`).

The turn then talks to a :class:`~holon_nb.providers._lineage.LineageProvider` whose head is that
provider and whose fallbacks come from ``$HOLON_MODEL_FALLBACKS`` (scripted refs have none); the
lineage is the only retry layer and records the attempt timeline. A registered provider that is
already a lineage (it has ``complete_turn_with_diagnostics``) is used as is.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...providers._lineage import LineageCandidate, LineageProvider
from ...providers._refs import ModelRefError, lineage_refs_from_env, parse_model_list, parse_model_ref
from ...providers.base import Provider
from ...providers.scripted import SCRIPTED_ROUTE_REF, load_script

if TYPE_CHECKING:
    from ._ports import ProviderSettings

__all__ = ["ProviderRegistry", "SCRIPT_ENV", "canonical_ref"]

#: Environment variable naming the script file of a bare ``scripted`` model ref.
SCRIPT_ENV = "HOLON_NB_SCRIPT"
_SCRIPT_SUFFIXES = (".yaml", ".yml", ".json")


def canonical_ref(ref: str) -> str:
    """``provider@endpoint/model`` for a parseable ref; ``scripted`` alone is ``scripted@default/scripted``;
    anything else is returned stripped."""
    text = (ref or "").strip()
    if text == "scripted":
        return SCRIPTED_ROUTE_REF
    try:
        return parse_model_ref(text).canonical
    except (ModelRefError, ValueError):
        return text


def _is_scripted(ref: str) -> bool:
    return ref.strip().split("@", 1)[0].split("/", 1)[0] == "scripted"


class ProviderRegistry:
    """Providers a runtime's turns may use (module docstring).

    Args:
        settings: Returns the runtime's current settings (their ``providers``).
        workspace: The runtime's workspace (it resolves relative script paths).
        environ: The environment to read (default ``os.environ`` at call time).
    """

    def __init__(
        self, settings: Callable[[], ProviderSettings], workspace: Path, environ: Mapping[str, str] | None = None
    ):
        self._settings = settings
        self.workspace = workspace
        self._environ = environ
        self._installed: dict[str, Provider] = {}
        self._lock = threading.Lock()
        self.default_ref: str | None = None

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment used for ``HOLON_MODEL``, fallbacks, scripts and keys."""
        return os.environ if self._environ is None else self._environ

    def register(self, ref: str, provider: Provider, *, default: bool = False) -> None:
        """Install ``provider`` for ``ref`` (replacing any earlier one).

        Args:
            ref: The model ref turns name (``model=`` or ``HOLON_MODEL``).
            provider: Anything with ``route_ref`` and ``async complete_turn(TurnRequest)``.
            default: Also use it when a turn names no model and ``HOLON_MODEL`` is unset.

        Raises:
            TypeError: when ``provider`` has no ``complete_turn``.
        """
        if not callable(getattr(provider, "complete_turn", None)):
            raise TypeError(f"a provider needs an async complete_turn(request), got {type(provider).__name__}")
        with self._lock:
            self._installed[ref.strip()] = provider
            self._installed[canonical_ref(ref)] = provider
            if default:
                self.default_ref = ref.strip()

    def unregister(self, ref: str) -> None:
        """Remove the provider installed for ``ref`` (no error when none is)."""
        with self._lock:
            for key in {ref.strip(), canonical_ref(ref)}:
                self._installed.pop(key, None)
            if self.default_ref in (ref.strip(), canonical_ref(ref)):
                self.default_ref = None

    def installed(self) -> dict[str, Provider]:
        """The installed providers by ref (a copy)."""
        with self._lock:
            return dict(self._installed)

    def model_ref(self, model: str | None) -> str:
        """The turn's model ref: ``model``, else ``$HOLON_MODEL``, else the default installed provider.

        Raises:
            ModelRefError: when none is configured.
        """
        ref = (model or "").strip() or self.environ.get("HOLON_MODEL", "").strip() or (self.default_ref or "")
        if not ref:
            raise ModelRefError(
                "no model configured: pass --model (%%agent) or model= (Python), set HOLON_MODEL (provider@endpoint/model), "
                "or rt.providers.register(ref, provider, default=True)"
            )
        return ref

    def resolve(self, ref: str, *, delta_listener: Callable[[str, dict[str, Any]], None] | None = None) -> Provider:
        """The attempt provider for ``ref`` (installed, scripted file, or built by the factory).

        ``delta_listener(kind, payload)`` receives streaming deltas of a provider built here
        (``text_delta``, ``tool_call_delta``); installed providers are used as they are.

        Raises:
            ModelRefError: a malformed ref, or a bare ``scripted`` ref without ``$HOLON_NB_SCRIPT``.
            FileNotFoundError / ScriptError: a script file that is missing or malformed.
            ProviderConfigError (or the factory's errors): a real provider that cannot be built.
        """
        with self._lock:
            found = self._installed.get(ref.strip()) or self._installed.get(canonical_ref(ref))
        if found is not None:
            return found
        if _is_scripted(ref):
            provider = self._load_script(ref)
            self.register(ref, provider)
            return provider
        try:
            from ...providers._factory import build_provider
        except ImportError as exc:  # the transports are not installed in this checkout
            raise ModelRefError(
                f"no provider registered for {ref!r}, and the provider factory is unavailable ({exc})"
            ) from None
        from ._catalog import provider_config

        config = provider_config(self.environ, self._settings().providers, strict=True)
        return build_provider(
            ref, environ=self.environ, config=config, delta_listener=delta_listener, require_credential=True
        )

    def is_installed(self, provider: Any) -> bool:
        """True when ``provider`` was registered (the runtime does not close it after a turn)."""
        with self._lock:
            return any(p is provider for p in self._installed.values())

    def _load_script(self, ref: str) -> Provider:
        model = ref.strip().split("/", 1)[1] if "/" in ref else ""
        if model.lower().endswith(_SCRIPT_SUFFIXES):
            path = Path(model)
        else:
            env = self.environ.get(SCRIPT_ENV, "").strip()
            if not env:
                raise ModelRefError(
                    f"model {ref!r} is scripted but names no script: use scripted@default/<file>.yaml "
                    f"or set ${SCRIPT_ENV}"
                )
            path = Path(env)
        if not path.is_absolute():
            path = self.workspace / path
        provider = load_script(path)
        provider.route_ref = canonical_ref(ref) if "/" in ref else SCRIPTED_ROUTE_REF
        return provider

    def lineage(
        self,
        ref: str,
        *,
        sleep: Callable[[float], Awaitable[Any]] | None = None,
        now: Callable[[], Any] | None = None,
        monotonic: Callable[[], float] | None = None,
        wrap: Callable[[Provider], Provider] | None = None,
        start_at: str | None = None,
        delta_listener: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> Any:
        """The provider a turn talks to: a lineage over ``ref`` (turn-loop spec §2.3).

        Args:
            ref: The requested model ref (the lineage head).
            sleep, now, monotonic: Injectable clocks for backoff and the attempt timeline.
            wrap: Applied to the head's attempt provider (a cassette wraps it here).
            start_at: A recovery turn's fallback ref: the lineage starts there, ``requested_model_ref``
                stays ``ref``.
            delta_listener: Streaming deltas of a provider built by the factory (see :meth:`resolve`).

        Returns:
            An object with ``route_ref`` and ``complete_turn_with_diagnostics``.
        """
        head_ref = start_at or ref
        if not _is_scripted(head_ref):
            try:
                for item in parse_model_list(self.environ.get("HOLON_MODEL_FALLBACKS")):
                    parse_model_ref(item)
            except ModelRefError as exc:  # a malformed fallback list: say so before building anything
                raise ModelRefError(f"HOLON_MODEL_FALLBACKS: {exc}") from None
        head = self.resolve(head_ref, delta_listener=delta_listener)
        if callable(getattr(head, "complete_turn_with_diagnostics", None)) and wrap is None:
            return head
        if wrap is not None:
            head = wrap(head)
        names = [head_ref]
        if not _is_scripted(head_ref):
            try:
                names = [r.canonical for r in lineage_refs_from_env(self.environ, head_ref)]
            except (ModelRefError, ValueError):  # an installed provider under a ref of its own
                names = [head_ref]
        provider_name = head_ref.split("@", 1)[0].split("/", 1)[0]
        candidates = [
            LineageCandidate(getattr(head, "route_ref", None) or canonical_ref(head_ref), provider_name, head)
        ]
        for other in names[1:]:
            candidates.append(LineageCandidate(other, other.split("@", 1)[0]))
        return LineageProvider(
            candidates, requested_model_ref=canonical_ref(ref), sleep=sleep, now=now, monotonic=monotonic
        )
