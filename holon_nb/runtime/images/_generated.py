"""Where GenerateImage writes: safe stems, extensions, and exclusive creation (workspace spec §13 rules 2, 4, 5)."""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

__all__ = ["GENERATED_DIR", "sanitize_name", "extension_for", "default_stem", "create_exclusive"]

#: Folder of generated images, relative to the agent home.
GENERATED_DIR = Path("media") / "generated"

_EXT_BY_MIME = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}


def sanitize_name(name: str) -> str:
    """Rule 2: every char outside ``[A-Za-z0-9_-]`` → ``_``, then ``_`` trimmed from both ends
    (``"../../etc/passwd"`` → ``"etc_passwd"``); may return ``""`` (the caller refuses it)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name.strip()).strip("_")


def extension_for(mime: str | None, output_format: str | None) -> str:
    """Rule 5: from the provider's mime, else ``output_format`` (``jpeg`` → ``jpg``), else ``png``."""
    if mime in _EXT_BY_MIME:
        return _EXT_BY_MIME[mime]
    if output_format:
        return "jpg" if output_format == "jpeg" else output_format
    return "png"


def default_stem(now: datetime) -> str:
    """``generated_<UTC %Y%m%dT%H%M%S.mmmZ>``."""
    return f"generated_{now.strftime('%Y%m%dT%H%M%S')}.{now.microsecond // 1000:03d}Z"


def create_exclusive(folder: Path, filename: str, data: bytes) -> Path:
    """Write ``data`` to ``folder/filename``, never replacing a file (designed here, rule 5).

    When the name is taken, the first free ``<base>_2.<ext>``, ``<base>_3.<ext>``, … is used; each attempt is
    an ``O_CREAT|O_EXCL`` open, so two writers racing for one name both succeed under different names.

    Returns:
        The path written.

    Raises:
        OSError: the folder is not writable, the disk is full, … (the partial file is removed).
    """
    base, dot, ext = filename.rpartition(".")
    if not dot:
        base, ext = filename, ""
    for n in range(1, 100_000):
        name = filename if n == 1 else f"{base}_{n}.{ext}" if ext else f"{base}_{n}"
        path = folder / name
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        except OSError:
            path.unlink(missing_ok=True)
            raise
        return path
    raise OSError(f"no free file name for {filename} in {folder}")
