"""Run an agent's code in the user namespace (issue 28: RunCode, ExecuteCell), without harming the kernel.

The code runs in its own thread (the kernel's thread may be running the user's next cell, or waiting for the
turn with ``%%agent --wait``), with:

- capture: ``sys.stdout``/``sys.stderr`` and the shell's display publisher are routed per thread while a run
  is active, so the run's prints and ``display()`` calls land in its receipt and the user's own output keeps
  going where it went;
- a deadline: past ``timeout_s`` the thread gets a ``KeyboardInterrupt`` (status ``timed_out``); a run that
  raises ``KeyboardInterrupt`` itself is ``interrupted``;
- guards: ``sys.exit()`` and ``os._exit()`` are refused (status ``refused``; the kernel keeps running), and
  ``input()`` raises ``EOFError`` at once (no stdin reaches code an agent runs) instead of waiting for a
  front end that will never answer.
"""

from __future__ import annotations

import ast
import base64
import binascii
import builtins
import os
import sys
import threading
import traceback
from typing import Any

from ._values import bounded_call, interrupt_thread, safe_repr

__all__ = ["CodeRunner", "MAX_STREAM_CHARS"]

#: Characters of stdout (and of stderr) a run keeps; the rest is counted, not kept.
MAX_STREAM_CHARS = 20_000
#: Characters of one display output's text.
MAX_OUTPUT_CHARS = 4_000
#: Most display outputs a run keeps.
MAX_OUTPUTS = 20
#: The mime types of a display output kept in a cell ExecuteCell ran, and the most characters of each.
_KEPT_MIMES = ("text/plain", "text/html", "text/markdown", "image/png", "image/jpeg", "image/svg+xml")
MAX_KEPT_BYTES = 2_000_000
#: images of one run shown as thumbnails beside its receipt
MAX_IMAGES = 8
#: Seconds a run interrupted at its deadline gets to unwind.
GRACE_S = 2.0

_EXIT_REFUSED = "refused: code run by an agent may not exit the kernel"
_NO_STDIN = "input() is not available to code an agent runs: there is no one to answer it (pass the value in the code)"


class _Capture:
    """One run's captured output."""

    def __init__(self) -> None:
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.sizes = {"stdout": 0, "stderr": 0}
        self.outputs: list[dict[str, Any]] = []
        self.truncated = False
        #: the run as nbformat outputs, in order (ExecuteCell records them in the document)
        self.cell_outputs: list[dict[str, Any]] = []
        #: ``(label, bytes)`` of the PNG and JPEG images the run displayed (RunCode shows them as thumbnails)
        self.images: list[tuple[str, bytes]] = []

    def write(self, stream: str, text: str) -> None:
        kept = self.stdout if stream == "stdout" else self.stderr
        room = MAX_STREAM_CHARS - self.sizes[stream]
        self.sizes[stream] += len(text)
        if room <= 0:
            self.truncated = True
            return
        kept.append(text[:room])
        if len(text) > room:
            self.truncated = True
        last = self.cell_outputs[-1] if self.cell_outputs else None
        if last is not None and last["output_type"] == "stream" and last["name"] == stream:
            last["text"] += text[:room]
        else:
            self.cell_outputs.append({"output_type": "stream", "name": stream, "text": text[:room]})

    def display(self, data: dict[str, Any], kind: str = "display") -> None:
        if len(self.outputs) >= MAX_OUTPUTS:
            self.truncated = True
            return
        self.outputs.append(output_entry(data, kind))
        kept = {m: v for m, v in data.items() if m in _KEPT_MIMES and len(str(v)) <= MAX_KEPT_BYTES}
        for mime in ("image/png", "image/jpeg"):
            encoded = kept.get(mime)
            if isinstance(encoded, str) and len(self.images) < MAX_IMAGES:
                try:
                    self.images.append((f"{kind} {len(self.outputs)} ({mime})", base64.b64decode(encoded)))
                except (binascii.Error, ValueError):
                    pass  # not base64: described in the receipt only
        if kind == "result":
            self.cell_outputs.append(
                {"output_type": "execute_result", "data": kept, "metadata": {}, "execution_count": None}
            )
        else:
            self.cell_outputs.append({"output_type": "display_data", "data": kept, "metadata": {}})


def output_entry(data: dict[str, Any], kind: str) -> dict[str, Any]:
    """``{kind, mime, text}`` of one display bundle: its text/plain (cut), images only described."""
    mimes = sorted(str(m) for m in data)
    images = [m for m in mimes if m.startswith("image/")]
    text = data.get("text/plain")
    if isinstance(text, list):
        text = "".join(text)
    if images:
        size = len(str(data[images[0]]))
        described = f"[{images[0]} image, {size} characters of data, not sent]"
        text = f"{described} {text}" if isinstance(text, str) else described
        mime = images[0]
    elif isinstance(text, str):
        mime = "text/plain"
    else:
        mime = mimes[0] if mimes else "text/plain"
        text = f"[{mime} output, {len(str(data.get(mime, '')))} characters, no text form]"
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"… [{len(text) - MAX_OUTPUT_CHARS} more chars]"
    return {"kind": kind, "mime": mime, "text": text}


class _Stream:
    """A ``sys.stdout``/``sys.stderr`` stand-in: a running agent thread's writes go to its capture."""

    def __init__(self, router: _Router, name: str, original: Any):
        self._router = router
        self._name = name
        self.original = original

    def write(self, text: str) -> int:
        capture = self._router.current()
        if capture is None:
            return int(self.original.write(text) or 0)
        capture.write(self._name, str(text))
        return len(text)

    def flush(self) -> None:
        if self._router.current() is None:
            self.original.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


class _DisplayPub:
    """The shell's display publisher, routed: an agent thread's ``display()`` goes to its capture."""

    def __init__(self, router: _Router, original: Any):
        self._router = router
        self.original = original

    def publish(self, data: dict[str, Any], metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
        capture = self._router.current()
        if capture is None:
            return self.original.publish(data, metadata, *args, **kwargs)
        capture.display(dict(data or {}))
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


class _Router:
    """Installs the routing stand-ins while at least one run is active; removes them after the last."""

    def __init__(self, shell: Any):
        self._shell = shell
        self._local = threading.local()
        self._lock = threading.Lock()
        self._active = 0
        self._saved: dict[str, Any] = {}

    def current(self) -> _Capture | None:
        capture: _Capture | None = getattr(self._local, "capture", None)
        return capture

    def bind(self, capture: _Capture | None) -> None:
        self._local.capture = capture

    def enter(self) -> None:
        with self._lock:
            self._active += 1
            if self._active > 1:
                return
            self._saved = {
                "stdout": sys.stdout,
                "stderr": sys.stderr,
                "input": builtins.input,
                "os_exit": os._exit,
                "display_pub": getattr(self._shell, "display_pub", None),
            }
            sys.stdout = _Stream(self, "stdout", sys.stdout)
            sys.stderr = _Stream(self, "stderr", sys.stderr)
            builtins.input = self._input  # type: ignore[assignment]
            os._exit = self._os_exit  # type: ignore[assignment]
            if self._saved["display_pub"] is not None:
                self._shell.display_pub = _DisplayPub(self, self._saved["display_pub"])

    def leave(self) -> None:
        with self._lock:
            self._active -= 1
            if self._active > 0:
                return
            saved = self._saved
            if isinstance(sys.stdout, _Stream):
                sys.stdout = saved["stdout"]
            if isinstance(sys.stderr, _Stream):
                sys.stderr = saved["stderr"]
            if builtins.input == self._input:
                builtins.input = saved["input"]
            if os._exit == self._os_exit:
                os._exit = saved["os_exit"]
            if isinstance(getattr(self._shell, "display_pub", None), _DisplayPub):
                self._shell.display_pub = saved["display_pub"]

    def _input(self, prompt: str = "") -> str:
        if self.current() is not None:
            raise EOFError(_NO_STDIN)
        result: str = self._saved["input"](prompt)
        return result

    def _os_exit(self, status: int) -> None:
        if self.current() is not None:
            raise SystemExit(f"os._exit({status}) {_EXIT_REFUSED}")
        self._saved["os_exit"](status)


class CodeRunner:
    """Runs code in ``shell.user_ns`` as described in the module docstring; one run at a time.

    Args:
        shell: The IPython shell (its ``user_ns``, ``transform_cell`` and ``display_pub`` are used).
    """

    def __init__(self, shell: Any):
        self._shell = shell
        self._router = _Router(shell)
        self._one = threading.Lock()
        self._current: threading.Thread | None = None  # the run in progress, for interrupt()

    def interrupt(self) -> bool:
        """Raise ``KeyboardInterrupt`` in the run in progress (its status becomes ``interrupted``): the
        notebook calls it when the user stops or interrupts an agent's turn (issue 28: "a timeout and
        KeyboardInterrupt"). Returns True when a run was interrupted."""
        thread = self._current
        return thread is not None and interrupt_thread(thread)

    def run(self, code: str, timeout_s: float) -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
        """Run ``code``; return the ``RunCodeResult`` payload (never raises for the code's failures) and the
        ``(label, bytes)`` of the PNG/JPEG images it displayed (at most ``MAX_IMAGES``)."""
        capture = _Capture()
        with self._one:
            payload = self._run(code, timeout_s, capture)
        return payload, capture.images

    def run_cell(self, code: str, timeout_s: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """:meth:`run`, and the run as nbformat outputs (stream, display_data, execute_result, error)."""
        capture = _Capture()
        with self._one:
            payload = self._run(code, timeout_s, capture)
        outputs = list(capture.cell_outputs)
        error = payload.get("error")
        if error is not None:
            outputs.append(
                {
                    "output_type": "error",
                    "ename": error["ename"],
                    "evalue": error["evalue"],
                    "traceback": error["traceback"],
                }
            )
        return payload, outputs

    def _run(self, code: str, timeout_s: float, capture: _Capture) -> dict[str, Any]:
        box: dict[str, Any] = {}
        try:
            source = self._shell.transform_cell(code)
            tree = ast.parse(source, "<agent code>")
        except SyntaxError as exc:
            return _result("error", capture, _error(exc, with_traceback=False))
        body, last = tree.body, None
        if body and isinstance(body[-1], ast.Expr):
            last = ast.Expression(body.pop().value)
        module = ast.Module(body=body, type_ignores=[])
        ns = self._shell.user_ns

        def work() -> None:
            self._router.bind(capture)
            try:
                exec(compile(module, "<agent code>", "exec"), ns)  # noqa: S102 - running it is the tool
                if last is not None:
                    value = eval(compile(last, "<agent code>", "eval"), ns)  # noqa: S307
                    if value is not None:
                        capture.display(self._format(value), "result")
                box["status"] = "ok"
            except SystemExit as exc:
                box["status"] = "refused"
                detail = str(exc) if _EXIT_REFUSED in str(exc) else f"sys.exit({exc.code!r}) {_EXIT_REFUSED}"
                box["error"] = {"ename": "SystemExit", "evalue": detail, "traceback": []}
            except KeyboardInterrupt as exc:
                box["status"] = "timed_out" if box.get("deadline") else "interrupted"
                box["error"] = _error(exc)
            except BaseException as exc:  # noqa: BLE001 - the code's failure is the result
                box["status"] = "error"
                box["error"] = _error(exc)
            finally:
                self._router.bind(None)

        self._router.enter()
        thread = threading.Thread(target=work, name="holon-nb-agent-code", daemon=True)
        try:
            thread.start()
            self._current = thread
            thread.join(timeout_s)
            if thread.is_alive():
                box["deadline"] = True
                interrupt_thread(thread)
                thread.join(GRACE_S)
        finally:
            self._current = None
            if not thread.is_alive():
                self._router.leave()
            else:  # stuck in C code: its guards stay until it ends
                threading.Thread(target=self._leave_after, args=(thread,), daemon=True).start()
        if thread.is_alive():
            error = {
                "ename": "TimeoutError",
                "evalue": f"still running after {timeout_s:g} s; abandoned",
                "traceback": [],
            }
            return _result("timed_out", capture, error)
        return _result(box.get("status", "error"), capture, box.get("error"))

    def _format(self, value: Any) -> dict[str, Any]:
        """The display bundle of a last expression's value: the shell's formatters, bounded; else a safe repr."""
        formatter = getattr(self._shell, "display_formatter", None)
        if formatter is not None:
            data, problem = bounded_call(lambda: formatter.format(value)[0], 5.0)
            if problem is None and isinstance(data, dict) and data:
                return data
        text, _ = safe_repr(value, MAX_OUTPUT_CHARS)
        return {"text/plain": text}

    def _leave_after(self, thread: threading.Thread) -> None:
        thread.join()
        self._router.leave()


def _error(exc: BaseException, with_traceback: bool = True) -> dict[str, Any]:
    frames = traceback.format_exception(type(exc), exc, exc.__traceback__) if with_traceback else []
    lines = [line.rstrip("\n") for line in frames if "holon_nb" not in line][-12:]
    try:
        evalue = str(exc)[:2000]
    except BaseException:  # noqa: BLE001
        evalue = "(unprintable)"
    return {"ename": type(exc).__name__, "evalue": evalue, "traceback": lines}


def _result(status: str, capture: _Capture, error: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "status": status,
        "stdout": "".join(capture.stdout),
        "stderr": "".join(capture.stderr),
        "outputs": list(capture.outputs),
        "truncated": capture.truncated,
    }
    if error is not None:
        out["error"] = error
    return out
