"""Colours of cards and live views that read in JupyterLab's light and dark themes (pure strings).

Every coloured text is a CSS custom property with a light fallback, ``var(--holon-warn, #9a6700)``:
the card's ``<style>`` (:func:`css`, inside every card root) sets the properties, from JupyterLab's
own variables where they fit (``--jp-border-color2`` for rules; under a dark theme
``--jp-content-font-color2`` for secondary text: in JupyterLab Light it is ``rgba(0,0,0,.54)``, 4.59:1
on white and under 4.5:1 on the grey output box, so light secondary text stays ``#57606a``, 6.4:1), and
to lighter values under a dark theme (``body[data-jp-theme-light='false']``, which
JupyterLab and Notebook 7 set); a front end that keeps inline styles but drops ``<style>`` (or has no
``--jp-*`` variables) uses the fallbacks, dark-on-light values. Each light value reaches WCAG AA
(4.5:1) on white and on the light grey output box, each dark value on JupyterLab Dark's ``#111``.

Status pills keep one fixed background with white text in both themes (each at least 4.5:1).

Example::

    f"<span style='color:{fg('muted')}'>12 ms</span>"
"""

from __future__ import annotations

__all__ = ["ANSI", "css", "fg", "muted_style"]

# name: (light, dark). Light values are GitHub Primer's "fg" colours (AA on white); dark ones Primer dark's.
_TEXT = {
    "ok": ("#1a7f37", "#3fb950"),
    "error": ("#cf222e", "#ff7b72"),
    "warn": ("#7d4e00", "#d29922"),
    "accent": ("#0969da", "#58a6ff"),
    "purple": ("#8250df", "#bc8cff"),
}
#: SGR foreground code → (light, dark) colour of command output.
ANSI = {
    30: ("#24292f", "#8b949e"),  # black: grey on a dark background, or it would vanish
    31: ("#cf222e", "#ff7b72"),
    32: ("#1a7f37", "#3fb950"),
    33: ("#7d4e00", "#d29922"),  # Primer's #9a6700 is 4.46:1 on the output box's grey
    34: ("#0969da", "#58a6ff"),
    35: ("#8250df", "#bc8cff"),
    36: ("#1b7c83", "#39c5cf"),
    37: ("#57606a", "#c9d1d9"),  # white: the muted grey on a light background, or it would vanish
    90: ("#57606a", "#8b949e"),
    91: ("#a40e26", "#ffa198"),
    92: ("#116329", "#56d364"),
    93: ("#7d4e00", "#e3b341"),
    94: ("#0550ae", "#79c0ff"),
    95: ("#6639ba", "#d2a8ff"),
    96: ("#0a6b74", "#56d4dd"),
    97: ("#424a53", "#f0f6fc"),
}
_MUTED_LIGHT = "#57606a"
_BORDER_LIGHT = "#d0d7de"


def fg(name: str) -> str:
    """The CSS colour of text kind ``name`` (``muted``, ``ok``, ``error``, ``warn``, ``accent``,
    ``purple``, ``border``, or ``ansi-31`` …): a ``var()`` with its light fallback."""
    if name == "muted":
        return f"var(--holon-muted, {_MUTED_LIGHT})"
    if name == "border":
        return f"var(--holon-border, {_BORDER_LIGHT})"
    if name.startswith("ansi-"):
        return f"var(--holon-{name}, {ANSI[int(name[5:])][0]})"
    return f"var(--holon-{name}, {_TEXT[name][0]})"


def muted_style() -> str:
    """``color:…`` of secondary text (labels, durations, ids, notes)."""
    return f"color:{fg('muted')}"


def _props(dark: bool) -> str:
    pick = 1 if dark else 0
    props = [f"--holon-{k}:{v[pick]}" for k, v in _TEXT.items()]
    props += [f"--holon-ansi-{k}:{v[pick]}" for k, v in ANSI.items()]
    return ";".join(props)


def css(root: str) -> str:
    """The custom properties for elements matching selector ``root`` (no ``<style>`` tags)."""
    return (
        f"{root}{{--holon-muted:{_MUTED_LIGHT};--holon-border:var(--jp-border-color2,{_BORDER_LIGHT});"
        f"{_props(False)}}}"
        f"body[data-jp-theme-light='false'] {root}{{--holon-muted:var(--jp-content-font-color2,#8b949e);"
        f"{_props(True)}}}"
    )
