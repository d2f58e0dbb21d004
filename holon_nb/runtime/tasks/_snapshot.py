"""Login-shell snapshots: run the login profile once, then run commands without it.

A login shell (``bash -lc``) reruns the user's whole profile for every command
(``pyenv init``, ``nvm``, conda, oh-my-zsh: often 100 ms to seconds). Like Codex's
shell snapshot, this module runs the login shell *once*, records what its
profile left behind — exported variables (as the difference from the
environment it started with, so per-call variables pass through), functions,
aliases and shell options — into a file under ``<home>/shell-snapshots/``,
validates it, and then each login command runs as a *non-login* shell that
sources the file first:

- bash: ``bash -c CMD`` with ``BASH_ENV=<snapshot>`` (read before CMD is parsed,
  so aliases apply and error line numbers are unchanged; the snapshot then
  restores ``BASH_ENV``, so children do not see it);
- zsh: ``zsh -c CMD`` with ``ZDOTDIR`` naming a directory whose ``.zshenv`` is the
  snapshot (read before CMD is parsed; the snapshot then restores ``ZDOTDIR``);
- sh (dash): ``sh -c '. <snapshot>'<newline>CMD`` (error line numbers are one
  higher; a POSIX ``sh`` cannot list its functions, so a profile that defines
  functions is not snapshotted).

Functions that add up to more than :data:`_LAZY_OVER` characters (bash) are recorded as stubs that load
their definition on first call (:func:`_stub`), from files named by their content
(``functions-<digest>/<name>``): parsing them cost every command ~0.1 ms a KiB.

Any other shell, a failed capture or validation, or a capture still running
after a short wait falls back to the plain login shell. A snapshot is refreshed
when one of the shell's startup files changes (path, mtime, size) or the base
environment differs, and is kept per working directory when the capture shows
the profile depends on it (the capture directory appears in what it recorded).

Trade-off: the environment is frozen at capture time. A profile whose output
changes on its own (a date, a random value, a tool installed since) keeps its
captured values until a startup file changes; text a profile prints is not
repeated for each command. ``HolonNB.shell_snapshot = False`` (or
``HOLON_SHELL_SNAPSHOT=0``) turns snapshots off.

The login shell is never killed: a profile killed mid-start can leave locks
behind (pyenv's rehash lock stalls every later login shell for 60 s). A capture
that hangs is left to finish on its own; commands fall back meanwhile.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shlex
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...tools._errors import HolonNBError
from ._launch import CommandEnv

__all__ = ["ShellSnapshots", "shell_kind"]

_log = logging.getLogger(__name__)

#: Variables the shell itself sets per process: never recorded.
_SKIP_VARS = frozenset(
    {
        "_",
        "SHLVL",
        "PWD",
        "OLDPWD",
        "BASH_ENV",
        "ZDOTDIR",
        "BASHOPTS",
        "SHELLOPTS",
        "ENV",
        "HOLON_AGENT_ID",
        "HOLON_AGENT_HOME",
    }
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: Options a shell refuses to set, or that describe how it was started.
_SKIP_SHOPT = frozenset({"login_shell", "restricted_shell"})
_SKIP_SETOPT = frozenset({"login", "interactive", "shinstdin", "privileged", "monitor", "zle", "singlecommand"})
_MAX_AGE_S = 7 * 24 * 3600  # snapshot files unused this long are removed at start
_VALIDATE_S = 5.0

_CAPTURE = {
    "bash": 'o="$1"; declare -f >"$o/functions" 2>/dev/null; declare -F >"$o/names" 2>/dev/null; mkdir "$o/fn" && '
    'while read -r __holon_d __holon_o __holon_fn; do declare -f "$__holon_fn" >"$o/fn/$__holon_fn"; '
    'done <"$o/names" 2>/dev/null; alias -p >"$o/aliases" 2>/dev/null; '
    '{ set +o; shopt -p; } >"$o/options" 2>/dev/null; command -p env -0 >"$o/env"',
    "zsh": 'o="$1"; typeset -f >"$o/functions" 2>/dev/null; alias -L >"$o/aliases" 2>/dev/null; '
    'setopt >"$o/options" 2>/dev/null; command -p env -0 >"$o/env"',
    "sh": 'o="$1"; alias >"$o/aliases" 2>/dev/null; set +o >"$o/options" 2>/dev/null; command -p env -0 >"$o/env"',
}
#: Definitions longer than this (all the profile's bash functions together) are loaded when a function is first
#: called instead of by every command: bash parses ~0.1 ms of a command's time a KiB of them (pyenv's 2.3 KiB
#: cost 0.2 ms, a fifth of ``sh -c true``), and most commands call none of them (issue 27 item 7).
_LAZY_OVER = 1024
_FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_:.-]*\Z")
_RESERVED = frozenset("if then else elif fi case esac for select while until do done in function time coproc".split())
#: Around a deferred definition: parsed as the capture printed it (``declare -f`` prints a body with its
#: aliases already expanded), so the aliases the snapshot defined do not expand in it a second time.
_DEFINITION_HEAD = (
    "case $BASHOPTS in *expand_aliases*) __holon_aliases=1 ;; *) __holon_aliases= ;; esac\nshopt -u expand_aliases\n"
)
_DEFINITION_TAIL = '[ -n "$__holon_aliases" ] && shopt -s expand_aliases\nunset __holon_aliases\n'
#: The options of a plain non-login shell: the snapshot records only the lines the profile changed.
_OPTIONS = {"bash": "set +o; shopt -p", "zsh": "setopt", "sh": "set +o"}


def shell_kind(shell: str) -> str | None:
    """``"bash"``, ``"zsh"`` or ``"sh"`` (also ``dash``) for a shell name or path; None for any other shell."""
    name = os.path.basename(shell)
    if name in ("bash", "zsh"):
        return name
    if name in ("sh", "dash"):
        return "sh"
    return None


def _profile_d() -> list[str]:
    """``/etc/profile.d/*.sh``, listed again only when the directory's mtime changes (a file added or removed)."""
    global _PROFILE_D
    try:
        mtime = os.stat("/etc/profile.d").st_mtime_ns
    except OSError:
        return []
    if _PROFILE_D is None or _PROFILE_D[0] != mtime:
        _PROFILE_D = (mtime, sorted(str(p) for p in Path("/etc/profile.d").glob("*.sh")))
    return _PROFILE_D[1]


_PROFILE_D: tuple[int, list[str]] | None = None


def _startup_files(kind: str, env: Mapping[str, str]) -> list[str]:
    home = env.get("HOME", "")
    etc_profile_d = _profile_d() if kind != "zsh" else []
    if kind == "bash":
        names = ["/etc/profile", "/etc/bash.bashrc", "/etc/bashrc", *etc_profile_d]
        names += [f"{home}/{n}" for n in (".bash_profile", ".bash_login", ".profile", ".bashrc")] if home else []
    elif kind == "zsh":
        zdot = env.get("ZDOTDIR") or home
        names = [f"/etc/{d}{n}" for d in ("", "zsh/") for n in ("zshenv", "zprofile", "zlogin")]
        names += [f"{zdot}/{n}" for n in (".zshenv", ".zprofile", ".zlogin")] if zdot else []
    else:
        names = ["/etc/profile", *etc_profile_d] + ([f"{home}/.profile"] if home else [])
    return names


def _stamp(paths: list[str]) -> tuple[tuple[str, int, int], ...]:
    out = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        out.append((p, st.st_mtime_ns, st.st_size))
    return tuple(out)


def _env_digest(env: Mapping[str, str]) -> str:
    """A short digest of the variables a capture depends on; memoised per distinct environment
    (this runs before every login command, and the environment rarely changes): a command's read-only
    :class:`~._launch.CommandEnv` keeps its own (issue 27 item 7), any other mapping is found by its items."""
    if type(env) is CommandEnv:
        return env.memo("digest", lambda: _env_digest(dict(env)))
    key = frozenset(env.items())
    digest = _DIGESTS.get(key)
    if digest is None:
        if len(_DIGESTS) >= 16:
            _DIGESTS.clear()
        digest = _DIGESTS[key] = _hash_env(env)
    return digest


_DIGESTS: dict[frozenset[tuple[str, str]], str] = {}


def _hash_env(env: Mapping[str, str]) -> str:
    h = hashlib.sha256()
    for k in sorted(env):
        if k not in _SKIP_VARS:
            h.update(f"{k}\0{env[k]}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:16]


@dataclass
class _Entry:
    """One capture slot: a shell, a base environment and (when the profile depends on it) a directory."""

    shell: str
    kind: str
    cwd: str  # "" for the shared slot
    path: Path
    capture_cwd: str = ""
    done: threading.Event = field(default_factory=threading.Event)
    ok: bool = False
    cwd_dependent: bool = False
    stamp: tuple[tuple[str, int, int], ...] = ()
    error: str | None = None
    captured_s: float = 0.0


class ShellSnapshots:
    """Snapshots of login shells for one holon home.

    Args:
        home: The holon home; files go to ``<home>/shell-snapshots/``.
        wait_s: How long a command waits for a capture in progress before it runs as a plain login shell.
    """

    def __init__(self, home: Path, wait_s: float = 1.0) -> None:
        self.dir = home / "shell-snapshots"
        self.wait_s = wait_s
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str, str], _Entry] = {}  # (shell, env digest, cwd or "") -> entry
        self._remove_stale()

    # ------------------------------------------------------------ public
    def start(self, shell: str, cwd: str, env: Mapping[str, str]) -> None:
        """Begin capturing ``shell``'s login profile in the background (no-op when off or unsupported)."""
        kind = shell_kind(shell)
        if kind is not None:
            self._slot(shell, kind, cwd, dict(env))

    async def launch(
        self, shell: str, cmd: str, cwd: str, env: Mapping[str, str]
    ) -> tuple[tuple[str, ...], Mapping[str, str]] | None:
        """The argv and environment that run ``cmd`` through a valid snapshot, or None to use ``<shell> -lc``.

        Waits (on the event loop) up to ``wait_s`` for a capture in progress. ``env`` is the
        command's complete environment; per-call variables (``HOLON_AGENT_ID``) pass through.
        """
        import anyio  # the loop's library; imported here to keep this module's import light

        kind = shell_kind(shell)
        if kind is None:
            return None
        deadline = time.monotonic() + self.wait_s
        while True:
            entry = self._entry(shell, kind, cwd, env)
            if entry.done.is_set() or time.monotonic() >= deadline:
                break
            await anyio.sleep(0.005)
        return _wrapped(entry, shell, cmd, env)

    def ready_launch(
        self, shell: str, cmd: str, cwd: str, env: Mapping[str, str]
    ) -> tuple[bool, tuple[tuple[str, ...], Mapping[str, str]] | None]:
        """:meth:`launch` without waiting (any thread): ``(True, what launch returns)``, or ``(False, None)``
        while a capture for the command is in progress (launch would wait for it)."""
        kind = shell_kind(shell)
        if kind is None:
            return True, None
        entry = self._entry(shell, kind, cwd, env)
        return (True, _wrapped(entry, shell, cmd, env)) if entry.done.is_set() else (False, None)

    def wait_captures(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` seconds for captures in progress (none is ever killed); True when none is left."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            pending = [e for e in self._entries.values() if not e.done.is_set()]
        for entry in pending:
            entry.done.wait(max(0.0, deadline - time.monotonic()))
        return all(e.done.is_set() for e in pending)

    # ------------------------------------------------------------ slots and capture
    def _entry(self, shell: str, kind: str, cwd: str, env: Mapping[str, str]) -> _Entry:
        """The entry a command in ``cwd`` uses: the shared one, or its directory's when the profile depends on it."""
        entry = self._slot(shell, kind, cwd, env)
        if entry.done.is_set() and entry.ok and entry.cwd_dependent and entry.capture_cwd != cwd:
            entry = self._slot(shell, kind, cwd, env, per_cwd=True)
        return entry

    def _slot(self, shell: str, kind: str, cwd: str, env: Mapping[str, str], per_cwd: bool = False) -> _Entry:
        """The current entry for this shell/env (and cwd); a new capture starts when none is fresh."""
        digest = _env_digest(env)
        key = (shell, digest, cwd if per_cwd else "")
        stamp = _stamp(_startup_files(kind, env))
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and (not entry.done.is_set() or entry.stamp == stamp):
                return entry
            name = hashlib.sha256("\0".join(key).encode("utf-8", "surrogateescape")).hexdigest()[:16]
            path = self.dir / f"{os.path.basename(shell)}-{name}.sh"
            if kind == "zsh":  # zsh reads $ZDOTDIR/.zshenv before a -c command: the snapshot is that file
                path = self.dir / f"zsh-{name}.zdot" / ".zshenv"
            entry = _Entry(shell, kind, cwd if per_cwd else "", path, capture_cwd=cwd, stamp=stamp)
            self._entries[key] = entry
        threading.Thread(target=self._capture, args=(entry, cwd, env), name="holon-shell-snapshot", daemon=True).start()
        return entry

    def _capture(self, entry: _Entry, cwd: str, env: dict[str, str]) -> None:
        t0 = time.monotonic()
        try:
            # private: the file holds the variables the profile exports (tokens too, if it exports any)
            self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            entry.path.parent.mkdir(mode=0o700, exist_ok=True)
            if entry.kind == "sh" and _defines_functions(entry.stamp):
                raise _Unsupported("the sh profile defines functions, which sh cannot list")
            with tempfile.TemporaryDirectory(prefix="capture-", dir=self.dir) as out:
                # never killed (see the module docstring): a hung profile leaves this thread waiting
                proc = subprocess.run(
                    [entry.shell, "-lc", _CAPTURE[entry.kind], entry.shell, out],
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
                if proc.returncode != 0 or not os.path.exists(f"{out}/env"):
                    raise _Unsupported(f"capture exited with status {proc.returncode}")
                parts = {n: _read(f"{out}/{n}") for n in ("functions", "aliases", "options", "env")}
                deferred = _deferred_functions(entry.kind, out, parts["functions"])
            plain = subprocess.run(
                [entry.shell, "-c", _OPTIONS[entry.kind]],
                cwd=cwd,
                env=env,
                capture_output=True,
                stdin=subprocess.DEVNULL,
                timeout=_VALIDATE_S,
            )  # non-login: safe to stop
            if plain.returncode == 0:  # drop what a non-login shell has anyway (fewer lines to source per command)
                default = set(plain.stdout.decode("utf-8", "surrogateescape").splitlines())
                parts["options"] = "\n".join(o for o in parts["options"].splitlines() if o not in default)
            stubs, check = None, ""
            if deferred:
                where = self._store_definitions(deferred)
                stubs = "\n".join(_stub(name, where / name) for name in deferred)
                check = "".join(f". {shlex.quote(str(where / name))} && " for name in deferred)
            text, dependent = _render(entry.kind, parts, env, cwd, stubs)
            tmp = entry.path.with_name(f"{entry.path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as fh:
                fh.write(text)
            _validate(entry.kind, entry.shell, str(tmp), cwd, env, check)
            os.replace(tmp, entry.path)
            entry.cwd_dependent, entry.ok = dependent, True
        except Exception as exc:  # any failure means: fall back to the login shell
            entry.error = str(exc)
            _log.info("shell snapshot of %s not used: %s", entry.shell, exc)
        finally:
            entry.captured_s = time.monotonic() - t0
            entry.done.set()

    def _store_definitions(self, definitions: dict[str, str]) -> Path:
        """Write deferred function definitions, one file a function, to ``functions-<digest>/``; returns it.

        Named by its content, so a stub always finds the definitions it was made with: two kernels capturing
        at once write the same directory, and a later capture with other functions writes another.
        """
        h = hashlib.sha256()
        for name, text in definitions.items():
            h.update(f"{name}\0{text}\0".encode("utf-8", "surrogateescape"))
        where = self.dir / f"functions-{h.hexdigest()[:16]}"
        if where.is_dir():
            os.utime(where)  # in use again: not removed as unreferenced (:meth:`_remove_stale`)
            return where
        tmp = Path(tempfile.mkdtemp(prefix="capture-", dir=self.dir))
        for name, text in definitions.items():
            fd = os.open(tmp / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as fh:
                fh.write(_DEFINITION_HEAD + text + "\n" + _DEFINITION_TAIL)
        try:
            os.rename(tmp, where)
        except OSError:  # another kernel wrote the same definitions first
            _remove(tmp)
            if not where.is_dir():
                raise
        return where

    def _remove_stale(self) -> None:
        """Remove leftovers of crashed captures, snapshot files unused for a week, and deferred function
        definitions no snapshot names (an hour after they were written: a capture writes them first)."""
        try:
            items = list(self.dir.iterdir())
        except OSError:
            return
        cutoff = time.time() - _MAX_AGE_S
        definitions = [item for item in items if item.name.startswith("functions-")]
        for item in items:
            try:
                if item.name.endswith(".tmp") or item.is_dir() and item.name.startswith("capture-"):
                    if item.stat().st_mtime < time.time() - 3600:
                        _remove(item)
                elif item.suffix == ".sh" and max(item.stat().st_atime, item.stat().st_mtime) < cutoff:
                    item.unlink()
                elif item.suffix == ".zdot":
                    zshenv = item / ".zshenv"
                    if not zshenv.exists() or max(zshenv.stat().st_atime, zshenv.stat().st_mtime) < cutoff:
                        _remove(item)
            except OSError:
                continue
        if definitions:
            named = "".join(_read(str(p)) for p in self.dir.glob("*.sh"))
            for item in definitions:
                with contextlib.suppress(OSError):
                    if item.name not in named and item.stat().st_mtime < time.time() - 3600:
                        _remove(item)


class _Unsupported(HolonNBError):
    """This platform or file system cannot take the snapshot this way (caught here, never raised out)."""


def _remove(path: Path) -> None:
    if path.is_dir():
        import shutil

        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _read(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "surrogateescape")
    except OSError:
        return ""


def _defines_functions(stamp: tuple[tuple[str, int, int], ...]) -> bool:
    pattern = re.compile(r"^\s*(function\s+)?[A-Za-z_][A-Za-z0-9_]*\s*\(\s*\)", re.M)
    for path, _, _ in stamp:
        if pattern.search(_read(path)):
            return True
    return False


def _deferred_functions(kind: str, out: str, functions: str) -> dict[str, str] | None:
    """The profile's function definitions by name, to load on first call; None to define them in the snapshot.

    Deferred only for bash, when they are longer than :data:`_LAZY_OVER` and every name is one a stub can
    define (a name a file can hold, no reserved word).
    """
    if kind != "bash" or len(functions) <= _LAZY_OVER:
        return None
    names = [line.split()[-1] for line in _read(f"{out}/names").splitlines() if line.startswith("declare -f")]
    if not names or not all(_FUNCTION_NAME.match(n) and n not in _RESERVED for n in names):
        return None
    definitions = {name: _read(f"{out}/fn/{name}") for name in names}
    return definitions if all(definitions.values()) else None


def _stub(name: str, definition: Path) -> str:
    """A bash function that, on its first call, replaces itself with its definition and calls that.

    Only a first call differs from the profile's function: it runs one frame deeper (``FUNCNAME``), and
    ``declare -f`` shows the stub until then. ``unset -f`` first: a missing definition ends in "command not
    found" or the program of that name, never in the stub calling itself.
    """
    return f'{name} () {{ unset -f {name}; . {shlex.quote(str(definition))} && {name} "$@"; }}'


def _render(
    kind: str, parts: dict[str, str], base: Mapping[str, str], cwd: str, stubs: str | None = None
) -> tuple[str, bool]:
    """The snapshot's text and whether it depends on the capture directory; ``stubs`` stand for the
    functions when their definitions are deferred (:func:`_deferred_functions`)."""
    captured = {}
    for item in parts["env"].split("\0"):
        name, sep, value = item.partition("=")
        if sep:
            captured[name] = value
    lines = ["# holon-nb shell snapshot (generated; refreshed when the shell's startup files change)", "{"]
    lines.append("unalias -a")
    exported_funcs = []
    if kind != "sh":
        lines.append(parts["functions"] if stubs is None else stubs)
    for line in parts["options"].splitlines():
        if kind == "bash" and line.startswith("shopt") and line.split()[-1] in _SKIP_SHOPT:
            continue
        if kind == "zsh":
            if line.strip() and line.strip() not in _SKIP_SETOPT:
                lines.append(f"setopt {line.strip()}")
            continue
        lines.append(line)
    for line in parts["aliases"].splitlines():
        if line.strip():
            lines.append(line if line.startswith("alias ") else f"alias {line}")
    for name, value in sorted(captured.items()):
        if name.startswith("BASH_FUNC_") and name.endswith("%%") and kind == "bash":
            exported_funcs.append(name[len("BASH_FUNC_") : -2])
            continue
        if name in _SKIP_VARS or not _NAME.match(name) or base.get(name) == value:
            continue
        lines.append(f"export {name}={shlex.quote(value)}")
    for name in sorted(base):
        if name not in captured and name not in _SKIP_VARS and _NAME.match(name):
            lines.append(f"unset {name}")
    lines += [f"export -f {shlex.quote(n)}" for n in exported_funcs if _NAME.match(n)]
    for var in {"bash": ("BASH_ENV",), "zsh": ("ZDOTDIR",)}.get(kind, ()):  # as the login shell left them
        restore = captured.get(var)
        lines.append(f"export {var}={shlex.quote(restore)}" if restore is not None else f"unset {var}")
    lines.append("} 2>/dev/null")
    lines.append("true")  # sourcing the snapshot succeeds whatever the last option line returned
    body = "\n".join(lines) + "\n"
    recorded = "\n".join(v for k, v in captured.items() if k not in _SKIP_VARS and base.get(k) != v)
    recorded += parts["aliases"] + parts["functions"]  # what the snapshot records, beside unchanged variables
    home = base.get("HOME", "")
    if home and (home == cwd or home.startswith(cwd.rstrip("/") + "/")):
        recorded = recorded.replace(home + "/", "")  # paths under HOME are no sign of depending on the directory
    dependent = bool(cwd) and cwd not in ("/",) and cwd in recorded
    return body, dependent


def _wrapped(
    entry: _Entry, shell: str, cmd: str, env: Mapping[str, str]
) -> tuple[tuple[str, ...], Mapping[str, str]] | None:
    """:func:`wrap` through ``entry``'s snapshot, or None when it has none (a failed or unfinished capture)."""
    if not (entry.done.is_set() and entry.ok) or not entry.path.exists():
        return None
    return wrap(entry.kind, shell, cmd, str(entry.path), env)


def wrap(
    kind: str, shell: str, cmd: str, snapshot: str, env: Mapping[str, str]
) -> tuple[tuple[str, ...], Mapping[str, str]]:
    """argv and env that run ``cmd`` in a non-login ``shell`` after sourcing ``snapshot``.

    The environment of a :class:`~._launch.CommandEnv` is one too, kept on it for each snapshot (issue 27
    item 7: made once, and its own encoding with it).
    """
    if kind == "sh":
        return (shell, "-c", f". {shlex.quote(snapshot)}\n{cmd}"), env
    name, value = ("BASH_ENV", snapshot) if kind == "bash" else ("ZDOTDIR", os.path.dirname(snapshot))
    if type(env) is not CommandEnv:
        return (shell, "-c", cmd), {**env, name: value}
    return (shell, "-c", cmd), env.memo((name, value), lambda: CommandEnv({**env, name: value}))


def _validate(kind: str, shell: str, snapshot: str, cwd: str, env: dict[str, str], check: str = "") -> None:
    """Source the snapshot in a non-login shell, then run ``check`` (the sourcing of deferred definitions):
    it must print nothing else and succeed.

    Raises:
        _Unsupported: when it does not.
    """
    # sourced explicitly (zsh too: the file is not yet the .zshenv it becomes)
    argv, run_env = wrap("sh" if kind == "zsh" else kind, shell, check + "printf holon-snapshot-ok", snapshot, env)
    try:
        proc = subprocess.run(
            argv, cwd=cwd, env=run_env, stdin=subprocess.DEVNULL, capture_output=True, timeout=_VALIDATE_S
        )  # a non-login shell: safe to stop on timeout
    except subprocess.TimeoutExpired:
        raise _Unsupported("validation timed out") from None
    if proc.returncode != 0 or proc.stdout != b"holon-snapshot-ok" or proc.stderr:
        raise _Unsupported(f"validation failed (status {proc.returncode}, stderr {proc.stderr[:200]!r})")
