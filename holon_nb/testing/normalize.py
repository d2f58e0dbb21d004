"""The masks of notebook comparison (notebook-tests spec §3), as a public module.

Everything here works on plain Python values (str, dict, list) and needs no
kernel, so other tools can use the same masks: an nbval sanitiser file, a
pytest-notebook post-processor, a script that diffs two executed notebooks.

Built-in masks, applied in this order to the runtime's own text (:meth:`Normalizer.runtime_text`:
every string inside a receipt, ``application/vnd.holon.tool-result+json``, an ``%%agent`` transcript,
a holon_nb table or card). User output (:meth:`Normalizer.text`: streams, ``text/plain``, HTML) gets
only the run's own roots, runtime ids, default-repr addresses and IPython display ids, plus the presets
of :data:`MASK_PRESETS` a notebook or the configuration asks for (issue 24, B4):

1. ANSI escape sequences removed (CSI and OSC), see :func:`strip_ansi`.
2. Paths under the holon home, the workspace, the system temporary directory
   replaced by ``<HOME>``, ``<WS>``, ``<TMP>`` (longest root first); the first
   component under ``<TMP>`` (a ``mkdtemp`` name) becomes ``<TMP>/<tmp>``. A harness run's
   own holon home (``<TMP>/holon-nb-run-*/home``) is ``<HOME>``, and the private copy of a
   tested notebook's folder (``<TMP>/holon-nb-copy-*/<folder>``, :mod:`holon_nb.testing._workdir`)
   is ``<WS>``.
   When the workspace is inside a git checkout, that checkout's root and its
   main worktree become ``<REPO>`` (receipts name them as execution roots), so a
   notebook's outputs do not depend on where the repository was cloned.
   The Python installation's package directories (``site-packages``: purelib and
   platlib) become ``<site-packages>``, so a file a dependency ships reads the same
   from any virtual environment. A root's path that a receipt cut short with an ellipsis
   (``/work/venv/lib/py…``) becomes its placeholder and the ellipsis (``<site-packages>…``). See :class:`Roots`.
3. Runtime ids, ``<prefix>_`` + 15 lowercase hex digits (``task_0123456789abcde``),
   become ``<prefix>_<id>`` (:data:`ID_RE`).
4. RFC 3339 timestamps (``2026-12-01T15:07:32.123Z``) become ``<time>`` (:data:`TIME_RE`).
5. Measured durations in text, a number with a fraction and a unit of seconds
   (``0.3 s``, ``0.05s``, ``1.25 seconds``) or any number of milliseconds (``12 ms``), become
   ``<duration>`` (:data:`DURATION_RE`): an ``%%agent`` transcript, pytest's summary line.
   Whole seconds (``sleep 3 s``, ``timeout 120 s``) are kept: those are settings, not measurements.
6. Values random by nature: object addresses in default reprs (``<Note at 0x7f45…>``) become
   ``0x<addr>``, UUIDs (``8-4-4-4-12`` hex, or 32 hex digits as ``DisplayHandle`` prints
   them) become ``<uuid>`` (:data:`ADDRESS_RE`, :data:`UUID_RE`); the folder ipykernel compiles
   cells into, named after its pid (``/tmp/ipykernel_18163/219594660.py`` in a warning), becomes
   ``ipykernel_<pid>`` (:data:`KERNEL_CELL_DIR_RE`).
7. User normalisers: ``[{"regex": …, "replace": …}]`` (``re.sub`` semantics),
   from ``metadata.holon_nb.normalize`` or the pytest option ``holon_nb_normalize``.

Receipts (JSON) get two structural masks as well (:func:`mask_json`): the value
of every key ending in ``_ms`` or ``_at`` becomes ``"<masked>"`` (``null``
stays ``null``: "not ended" differs from "ended at some time"), and every
number under a ``usage`` object (token counts) becomes ``"<n>"``.

Streams (:func:`terminal_text`) are rendered as a terminal shows them: ``\\r``
returns to the start of the line and later characters overwrite earlier ones,
``\\b`` moves one column back, ANSI sequences are removed.

Example, an nbval sanitiser written with these masks::

    from holon_nb.testing.normalize import Normalizer, Roots
    norm = Normalizer(Roots.current(workspace="."))
    assert norm.runtime_text("task_0123456789abcde at 2026-12-01T15:07:32Z") == "task_<id> at <time>"
"""

from __future__ import annotations

import os
import re
import subprocess
import sysconfig
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..render import RESULT_MIMETYPE  # the MIME type of a holon_nb tool receipt in a display bundle
from ..render._ansi import terminal_text as _terminal

__all__ = [
    "ADDRESS_RE",
    "DISPLAY_ID_RE",
    "MASK_PRESETS",
    "REPR_ADDRESS_RE",
    "ANSI_RE",
    "DURATION_RE",
    "ID_RE",
    "UUID_RE",
    "TIME_RE",
    "RESULT_MIMETYPE",
    "Normalizer",
    "Roots",
    "UserRule",
    "json_differences",
    "mask_json",
    "parse_rules",
    "read_sanitize_file",
    "strip_ansi",
    "terminal_text",
]

#: CSI (``ESC [ … final``) and OSC (``ESC ] … BEL|ESC \\``) sequences and lone two-byte escapes.
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
#: A runtime id: a lowercase prefix, ``_``, then exactly 15 lowercase hex digits.
ID_RE = re.compile(r"\b([a-z][a-z0-9]*)_[0-9a-f]{15}\b")
#: An RFC 3339 date-time (``T`` or space between date and time; fraction and offset optional).
TIME_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b")

#: A measured duration in text: seconds with a fraction, or milliseconds.
DURATION_RE = re.compile(r"(?<![\w.])(?:\d+\.\d+ ?(?:s|sec|secs|seconds)|\d+(?:\.\d+)? ?ms)\b")

#: A memory address in a default repr: `` at 0x7f457c0250d0``.
ADDRESS_RE = re.compile(r"(?<= at )0x[0-9a-fA-F]{4,16}\b")
#: A UUID, dashed or as 32 hex digits.
UUID_RE = re.compile(r"\b(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})\b")

#: An object's address in a default repr (``<__main__.Note object at 0x7f45…>``, ``<function f at 0x…>``):
#: always masked, unlike :data:`ADDRESS_RE`, which also matches ``register at 0x1000`` in user text.
REPR_ADDRESS_RE = re.compile(r"(?<=<)([A-Za-z_][\w.]*(?: object)? at )0x[0-9a-fA-F]{4,16}(?=>)")
#: IPython's random display ids as ``DisplayHandle`` prints them (``display_id=`` + 32 hex): always masked.
DISPLAY_ID_RE = re.compile(r"(?<=display_id=)[0-9a-f]{32}\b")
#: the folder ipykernel compiles cells into, named after the kernel's pid (``/tmp/ipykernel_18163/219594660.py``,
#: as a warning raised in a cell names it): always masked. The file name, a hash of the cell's code, is kept.
KERNEL_CELL_DIR_RE = re.compile(r"(?<![\w-])ipykernel_\d+(?=[/\\])")

#: Masks a notebook or the pytest configuration may ask for in user output (``--holon-nb-mask``,
#: ini ``holon_nb_masks``, ``metadata.holon_nb.masks``); receipts always get all of them.
MASK_PRESETS = ("timestamps", "durations", "addresses", "uuids", "tmp")

MASKED = "<masked>"
#: An absolute path a receipt cut short with an ellipsis (at least 5 characters before it).
_CUT_PATH_RE = re.compile(r"(?<![\w<>/])(/[^\s\"'`<>\u2026]{4,})\u2026")
_HARNESS_HOME = re.compile(r"holon-nb-run-[A-Za-z0-9_]+/home")
# a tested notebook's private copy of its folder (holon_nb.testing._workdir): the workspace of that run
_HARNESS_COPY = re.compile(r"holon-nb-copy-[A-Za-z0-9_]+/[^/\s\"'`:,;)\]}]+")


def strip_ansi(text: str) -> str:
    """Return ``text`` without ANSI escape sequences (colours, cursor moves, OSC titles/links)."""
    return ANSI_RE.sub("", text)


def terminal_text(text: str) -> str:
    """Render stream text as a terminal shows it (notebook-tests spec §3.1).

    ANSI sequences are removed, then each line keeps its final state: ``\\r``
    goes back to column 0 and later characters overwrite earlier ones
    (``"\\r10%\\r50%\\r100%\\n"`` -> ``"100%\\n"``; ``"abc\\rX"`` -> ``"Xbc"``).
    ``\\r\\n`` is a plain newline.
    """
    # the same rendering as a receipt's command output (render/_ansi.py), after this module's ANSI mask
    return _terminal(strip_ansi(text))


@dataclass(frozen=True)
class Roots:
    """The directories whose absolute paths are masked: holon home, workspace, temporary directory.

    Each attribute is a tuple of absolute paths (one run's and, when comparing, the saved run's).
    """

    home: tuple[str, ...] = ()
    workspace: tuple[str, ...] = ()
    tmp: tuple[str, ...] = ()
    repo: tuple[str, ...] = ()
    site: tuple[str, ...] = ()

    @classmethod
    def current(
        cls, *, home: str | os.PathLike[str] | None = None, workspace: str | os.PathLike[str] | None = None
    ) -> Roots:
        """Roots of this process: ``home`` (default ``$HOLON_NB_HOME``), ``workspace``, the temp dir,
        and the git checkout the workspace is in (:func:`git_roots`)."""
        home = home if home is not None else os.environ.get("HOLON_NB_HOME")
        site = [sysconfig.get_paths().get(k) for k in ("purelib", "platlib")]
        return cls(
            home=_paths([home]),
            workspace=_paths([workspace]),
            tmp=_paths([tempfile.gettempdir()]),
            repo=_paths(git_roots(workspace) if workspace else []),
            site=_paths(site),
        )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> Roots:
        """Roots from ``{"home": str|[str], "workspace": …, "tmp": …}`` (a notebook's recorded roots)."""
        data = data or {}

        def get(key: str) -> tuple[str, ...]:
            value = data.get(key)
            return _paths(value if isinstance(value, list) else [value])

        return cls(home=get("home"), workspace=get("workspace"), tmp=get("tmp"), repo=get("repo"), site=get("site"))

    def merged(self, other: Roots) -> Roots:
        """Both sets of roots (the saved run's and this run's)."""
        return Roots(
            self.home + other.home,
            self.workspace + other.workspace,
            self.tmp + other.tmp,
            self.repo + other.repo,
            self.site + other.site,
        )

    def as_mapping(self) -> dict[str, list[str]]:
        """JSON form, the inverse of :meth:`from_mapping`."""
        return {
            "home": list(self.home),
            "workspace": list(self.workspace),
            "tmp": list(self.tmp),
            "repo": list(self.repo),
            "site": list(self.site),
        }


def git_roots(path: str | os.PathLike[str]) -> list[str]:
    """The root of the git checkout ``path`` is in and its main worktree (one path when they are the
    same); ``[]`` outside a checkout or without git. Runs ``git rev-parse`` once."""
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    lines = out.stdout.splitlines() if out.returncode == 0 else []
    if len(lines) != 2:
        return []
    common = Path(lines[1])
    main = str(common.parent) if common.name == ".git" else None
    return [p for p in dict.fromkeys([lines[0], main]) if p]


def _paths(values: Iterable[Any]) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        if not value:
            continue
        for p in {str(value), os.path.realpath(str(value))}:
            p = p.rstrip("/") or "/"
            if p != "/" and p not in out:
                out.append(p)
    return tuple(out)


@dataclass(frozen=True)
class UserRule:
    """One user normaliser: ``re.sub(regex, replace, text)``."""

    regex: re.Pattern[str]
    replace: str


def parse_rules(items: Iterable[Any] | None) -> list[UserRule]:
    """Parse normalisers: ``{"regex": R, "replace": S}`` objects or ``"R => S"`` strings.

    Raises:
        ValueError: for an entry of another shape or a regex that does not compile (message names it).
    """
    rules: list[UserRule] = []
    for item in items or []:
        if isinstance(item, str):
            if not item.strip():
                continue
            regex, sep, replace = item.partition(" => ")
            if not sep:
                raise ValueError(f"normaliser {item!r}: expected 'REGEX => REPLACEMENT'")
        elif isinstance(item, Mapping) and isinstance(item.get("regex"), str):
            regex, replace = item["regex"], str(item.get("replace", ""))
        else:
            raise ValueError(f"normaliser {item!r}: expected {{'regex': …, 'replace': …}}")
        try:
            rules.append(UserRule(re.compile(regex), replace))
        except re.error as exc:
            raise ValueError(f"normaliser regex {regex!r} does not compile: {exc}") from None
    return rules


def read_sanitize_file(path: str | os.PathLike[str]) -> list[UserRule]:
    """User normalisers from an nbval sanitize file (``--nbval-sanitize-with``; issue 24, A3).

    The file holds ``[section]`` headers (ignored) and pairs of lines ``regex: R`` then ``replace: S``,
    each pair one rule (``re.sub`` semantics, ``\\1`` back-references included); other lines are ignored.

    Raises:
        ValueError: when the file cannot be read, a ``regex:`` line has no ``replace:`` line after it,
            or a regex does not compile (the message names the line).
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ValueError(f"sanitize file {path}: {exc.strerror or exc}") from None
    rules: list[UserRule] = []
    for n, line in enumerate(lines, start=1):
        if not line.startswith("regex: "):
            continue
        following = lines[n] if n < len(lines) else ""
        if not following.startswith("replace: "):
            raise ValueError(f"sanitize file {path}, line {n}: 'regex:' without a 'replace:' line after it")
        regex, replace = line[len("regex: ") :], following[len("replace: ") :]
        try:
            rules.append(UserRule(re.compile(regex), replace))
        except re.error as exc:
            raise ValueError(f"sanitize file {path}, line {n}: regex {regex!r} does not compile: {exc}") from None
    return rules


class Normalizer:
    """Apply the built-in masks, then user rules, to text and JSON values.

    Two kinds of text get different masks (issue 24, B4):

    - the runtime's own output (receipts, ``%%agent`` transcripts, ``application/vnd.holon.*`` bundles):
      :meth:`runtime_text` and :meth:`json`, every built-in mask;
    - user output (streams, ``text/plain``, HTML, error messages): :meth:`text`, only the run's own roots
      (holon home, workspace and its checkout, site-packages, the harness's temporary folders), runtime ids,
      default-repr addresses and IPython display ids, plus the ``masks`` asked for (:data:`MASK_PRESETS`):
      an md5 digest, a data timestamp or ``/tmp/report.csv`` printed by a cell is data, not noise.

    Args:
        roots: Paths to mask (:class:`Roots`).
        rules: User normalisers (:func:`parse_rules`), applied after the built-in masks.
        masks: Presets of :data:`MASK_PRESETS` applied to user output too.
        keep_ansi: Keep ANSI escape sequences in user output (``--holon-nb-compare-ansi``).

    Raises:
        ValueError: for a mask that is not a preset.
    """

    def __init__(
        self,
        roots: Roots | None = None,
        rules: Sequence[UserRule] = (),
        masks: Iterable[str] = (),
        keep_ansi: bool = False,
    ):
        self.roots = roots or Roots()
        self.rules = list(rules)
        self.masks = frozenset(masks)
        unknown = sorted(self.masks - set(MASK_PRESETS))
        if unknown:
            raise ValueError(f"unknown mask {', '.join(unknown)}: choose from {', '.join(MASK_PRESETS)}")
        self.keep_ansi = keep_ansi
        self._root_re, self._tokens = self._roots_pattern(with_tmp=True)
        self._own_re, self._own_tokens = self._roots_pattern(with_tmp=False)
        tmp = "|".join(re.escape(p) for p in sorted(self.roots.tmp, key=len, reverse=True))
        # the harness's own folders under the temp dir (holon-nb-run-*, -copy-*, -test-*) are the run's roots
        self._harness_re = re.compile(f"(?:{tmp})/(?=holon-nb-(?:run|copy|test)-)") if tmp else None

    def _roots_pattern(self, with_tmp: bool) -> tuple[re.Pattern[str] | None, list[str]]:
        pairs = [(p, "<HOME>") for p in self.roots.home] + [(p, "<WS>") for p in self.roots.workspace]
        pairs += [(p, "<TMP>") for p in self.roots.tmp] if with_tmp else []
        pairs += [(p, "<REPO>") for p in self.roots.repo] + [(p, "<site-packages>") for p in self.roots.site]
        pairs.sort(key=lambda pair: len(pair[0]), reverse=True)  # the most specific root wins
        alternatives = "|".join(f"(?P<r{i}>{re.escape(p)})" for i, (p, _) in enumerate(pairs))
        pattern = re.compile(f"(?:{alternatives})(?=/|\\b|$)") if pairs else None
        return pattern, [token for _, token in pairs]

    def paths(self, text: str, *, all_tmp: bool = True) -> str:
        """Replace absolute paths under the roots by ``<HOME>``, ``<WS>``, ``<TMP>``, ``<REPO>``,
        ``<site-packages>``; with ``all_tmp`` False, of the temp dir only the harness's own folders."""
        pattern, tokens = (self._root_re, self._tokens) if all_tmp else (self._own_re, self._own_tokens)
        if not all_tmp and self._harness_re is not None:
            text = self._harness_re.sub("<TMP>/", text)
        if pattern is not None:
            text = pattern.sub(lambda m: tokens[int(m.lastgroup[1:])], text)  # type: ignore[index]
        text = re.sub(r"<TMP>/" + _HARNESS_HOME.pattern, "<HOME>", text)  # a harness run's own home
        text = re.sub(r"<TMP>/" + _HARNESS_COPY.pattern, "<WS>", text)  # a tested notebook's folder copy
        text = re.sub(r"<TMP>/(?!<)[^/\s\"'`:,;)\]}]+", "<TMP>/<tmp>", text)
        return _CUT_PATH_RE.sub(lambda m: self._cut_root(m, all_tmp), text) if "\u2026" in text else text

    def _cut_root(self, match: re.Match[str], all_tmp: bool) -> str:
        """A root's path cut short by a receipt (``/work/venv/lib/py…``) as its placeholder (``<site-packages>…``)."""
        cut = match.group(1)
        pairs = [(p, "<HOME>") for p in self.roots.home] + [(p, "<WS>") for p in self.roots.workspace]
        pairs += [(p, "<REPO>") for p in self.roots.repo] + [(p, "<site-packages>") for p in self.roots.site]
        pairs += [(p, "<TMP>") for p in self.roots.tmp] if all_tmp else []
        for root, token in sorted(pairs, key=lambda pair: len(pair[0]), reverse=True):
            if root.startswith(cut) or cut.startswith(root + "/"):
                return token + "\u2026"
        return match.group(0)

    def _masks(self, text: str, masks: frozenset[str] | set[str]) -> str:
        text = ID_RE.sub(r"\1_<id>", text)
        text = REPR_ADDRESS_RE.sub(r"\g<1>0x<addr>", text)
        text = DISPLAY_ID_RE.sub("<uuid>", text)
        text = KERNEL_CELL_DIR_RE.sub("ipykernel_<pid>", text)
        if "timestamps" in masks:
            text = TIME_RE.sub("<time>", text)
        if "durations" in masks:
            text = DURATION_RE.sub("<duration>", text)
        if "addresses" in masks:
            text = ADDRESS_RE.sub("0x<addr>", text)
        if "uuids" in masks:
            text = UUID_RE.sub("<uuid>", text)
        for rule in self.rules:
            text = rule.regex.sub(rule.replace, text)
        return text

    def text(self, text: str) -> str:
        """User output: ANSI removed (unless ``keep_ansi``), the run's own roots, runtime ids, default-repr
        addresses, display ids, ipykernel's cell folder, the presets in ``masks``, then user rules."""
        text = text if self.keep_ansi else strip_ansi(text)
        return self._masks(self.paths(text, all_tmp="tmp" in self.masks), self.masks)

    def runtime_text(self, text: str) -> str:
        """The runtime's own output: ANSI, every root (any temp path), ids, timestamps, durations, addresses,
        UUIDs, then user rules."""
        return self._masks(self.paths(strip_ansi(text)), set(MASK_PRESETS))

    def stream(self, text: str) -> str:
        """Terminal rendering (:func:`terminal_text`; with ``keep_ansi``, colour sequences stay in lines that
        ``\\r``/``\\b`` do not rewrite), then :meth:`text`."""
        return self.text(_terminal(text, keep_colour=True) if self.keep_ansi else terminal_text(text))

    def json(self, value: Any) -> Any:
        """A receipt with structural masks (:func:`mask_json`) and every string through :meth:`runtime_text`."""
        return mask_json(value, self.runtime_text)


def mask_json(value: Any, text: Any = None, *, key: str = "", in_usage: bool = False) -> Any:
    """Return a masked copy of a JSON value.

    Values of keys ending in ``_ms`` or ``_at`` become ``"<masked>"`` unless null; numbers
    anywhere under a ``usage`` object become ``"<n>"``; strings go through ``text``
    (a ``str -> str`` function, default identity).
    """
    if key.endswith(("_ms", "_at")) and value is not None:
        return MASKED
    if isinstance(value, Mapping):
        return {k: mask_json(v, text, key=str(k), in_usage=in_usage or k == "usage") for k, v in value.items()}
    if isinstance(value, list):
        return [mask_json(v, text, key="", in_usage=in_usage) for v in value]
    if in_usage and isinstance(value, (int, float)) and not isinstance(value, bool):
        return "<n>"
    if isinstance(value, str) and text is not None:
        return text(value)
    return value


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


_MISSING = object()


def json_differences(expected: Any, actual: Any, pointer: str = "") -> list[tuple[str, Any, Any]]:
    """Every differing value of two JSON values: ``[(json_pointer, expected, actual)]``.

    Objects are compared key by key (order ignored), arrays index by index; a key or
    item present on one side only is reported with ``"<missing>"`` on the other.
    """
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        out: list[tuple[str, Any, Any]] = []
        for k in sorted(set(expected) | set(actual), key=str):
            e, a = expected.get(k, _MISSING), actual.get(k, _MISSING)
            sub = f"{pointer}/{_escape(str(k))}"
            if e is _MISSING or a is _MISSING:
                out.append((sub, "<missing>" if e is _MISSING else e, "<missing>" if a is _MISSING else a))
            else:
                out.extend(json_differences(e, a, sub))
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        out = []
        for i in range(max(len(expected), len(actual))):
            sub = f"{pointer}/{i}"
            if i >= len(expected) or i >= len(actual):
                out.append(
                    (
                        sub,
                        expected[i] if i < len(expected) else "<missing>",
                        actual[i] if i < len(actual) else "<missing>",
                    )
                )
            else:
                out.extend(json_differences(expected[i], actual[i], sub))
        return out
    if (
        expected != actual
        or type(expected) is not type(actual)
        and not (isinstance(expected, (int, float)) and isinstance(actual, (int, float)))
    ):
        return [(pointer or "/", expected, actual)]
    return []
