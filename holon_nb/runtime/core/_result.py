"""``ToolResult``: what ``Runtime.call`` returns; it displays through :mod:`holon_nb.render`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ...render import OUTPUT_SHOWN_BELOW, RESULT_MIMETYPE, human_text, mimebundle
from ...tools._text import encodable_value

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ...tools._registry import Registry

__all__ = ["ToolResult", "RESULT_MIMETYPE"]


@dataclass(frozen=True)
class ToolResult:
    """One tool call's outcome.

    Attributes:
        envelope: The canonical envelope, a plain dict (inputs kept as given, D6).
        receipt: The model-visible text: rendered, scrubbed (D6) and passed
            through the provider-projection guard.
        display_envelope: The envelope with secret values scrubbed (D12); what
            the notebook shows and saves.
        full_receipt: The scrubbed receipt before the projection guard.
        execution_id: The tool execution id (``tool_<15 hex>``).
        duration_ms: Wall time of the call in milliseconds.
        projected: True when ``receipt`` is the projection stand-in.
        previews: Thumbnails of the images the call viewed or wrote (ViewImage, GenerateImage; also a
            validated image whose observation failed), ``{mime, data (bytes), width, height, label}``;
            never sent to a model nor stored, only displayed (see :mod:`holon_nb.runtime.images._preview`).
        path_labels: ``(absolute path, label)`` pairs the human receipt shows shorter (the holon home
            as ``<holon home>``, the workspace as relative paths), or a function returning them, called
            when the result is first displayed (a caller that never displays it never reads them).
        registry: The registry the call went through (its renderers make ``display_text``);
            None means the built-in one.
        ran_ms: Display only: for a task's final receipt (a TaskOutput fetched once the task ended), how
            long the task ran in milliseconds; the first line shows it instead of the call's few ms
            (:meth:`as_final_receipt`).
    """

    envelope: dict[str, Any]
    receipt: str
    display_envelope: dict[str, Any]
    full_receipt: str
    execution_id: str
    duration_ms: int
    projected: bool = False
    previews: tuple[dict[str, Any], ...] = ()
    path_labels: tuple[tuple[str, str], ...] | Callable[[], tuple[tuple[str, str], ...]] = ()
    registry: Registry | None = None
    ran_ms: int | None = None

    @cached_property
    def paths(self) -> tuple[tuple[str, str], ...]:
        """:attr:`path_labels`, read once."""
        labels = self.path_labels
        return labels() if callable(labels) else labels

    @property
    def tool_name(self) -> str:
        """The tool name as called."""
        return self.envelope["tool_name"]

    @property
    def status(self) -> str:
        """``success``, ``error`` or ``deferred``."""
        return self.envelope["status"]

    @property
    def ok(self) -> bool:
        """True unless the envelope is an error."""
        return self.status != "error"

    @property
    def result(self) -> dict[str, Any] | None:
        """The success payload, or None."""
        return self.envelope.get("result")

    @cached_property
    def typed(self) -> BaseModel | None:
        """The success (or deferred) ``result`` as an instance of its tool's ``output_model``, parsed on first use.

        ``rt.call("ExecCommand", {"cmd": "true"}).typed`` is an ``ExecCommandResult``
        (:mod:`holon_nb.tools.builtin.results`); attributes the result does not carry are None.

        Returns:
            The model instance, or None for an error envelope or a tool the registry does not know.

        Raises:
            pydantic.ValidationError: the result does not fit its model (dispatch never makes such an envelope).
        """
        result = self.envelope.get("result")
        if result is None:
            return None
        from ...tools._registry import REGISTRY

        spec = (self.registry or REGISTRY).get(self.tool_name)
        return None if spec is None else spec.output_model.model_validate(result)

    @property
    def error(self) -> dict[str, Any] | None:
        """The ``ToolError`` dict, or None."""
        return self.envelope.get("error")

    @cached_property
    def display_text(self) -> str:
        """The text a notebook shows and saves (``text/plain``): the human receipt.

        First line: tool, status, duration, summary; then the result's key fields
        (:func:`holon_nb.render.human_text`). The model-visible ``receipt`` is
        in the HTML card ("what the model sees") and the envelope in the JSON mimetype.
        When the receipt is over the model's tool-output budget, a last line says
        that a model gets a stand-in for it.
        """
        from ...tools._registry import REGISTRY

        return human_text(self, self.registry or REGISTRY)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # always encodable as UTF-8: a lone surrogate would make the kernel fail to send the whole output
        bundle: dict[str, Any] = encodable_value(mimebundle(self))
        return bundle

    def as_final_receipt(self, ran_ms: int | None) -> ToolResult:
        """This result shown as a task's final receipt: its first line says how long the task ran.

        Args:
            ran_ms: The task's run time in milliseconds (None: keep the call's duration).

        Returns:
            A copy with :attr:`ran_ms` set; the envelope and the receipt JSON are unchanged.
        """
        import dataclasses

        return dataclasses.replace(self, path_labels=self.paths, ran_ms=ran_ms)

    def output_shown_below(self) -> dict[str, Any]:
        """This result's mimebundle for a cell that shows a promoted command's output in a task view below.

        The text and the card say where the output is instead of repeating what the command printed
        before promotion (the view, then the task's final receipt, shows all of it: issue 11, item 5);
        the receipt JSON (``RESULT_MIMETYPE``) is unchanged.

        Returns:
            ``{mimetype: data}``, as :meth:`_repr_mimebundle_`.
        """
        import dataclasses

        bundle = self._repr_mimebundle_()
        result = self.display_envelope.get("result")
        if not isinstance(result, dict) or result.get("disposition") != "promoted_to_task":
            return bundle
        marked = dataclasses.replace(
            self,
            path_labels=self.paths,
            display_envelope={**self.display_envelope, "result": {**result, OUTPUT_SHOWN_BELOW: True}},
        )
        shown = marked._repr_mimebundle_()
        return {**bundle, "text/plain": shown["text/plain"], "text/html": shown["text/html"]}

    def __repr__(self) -> str:
        return f"<ToolResult {self.tool_name} {self.status}>"
