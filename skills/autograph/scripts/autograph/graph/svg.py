"""Charts as inline SVG, drawn with the standard library.

Each function returns one ``<svg>`` element as text, sized by its
``viewBox`` only (the page's CSS makes it as wide as its box, so a chart
scales from a phone to a desktop).  Colours and font sizes come from CSS
classes, so the page decides light and dark mode and larger text on narrow
screens:

* ``grid`` (gridlines), ``axis`` (tick labels), ``line`` (the trend line),
  ``point`` (one ``<circle>`` per value, with a ``<title>`` tooltip);
* ``area s0`` ... ``area sN`` (the bands of a stacked chart, bottom first).

Every piece of text that reaches a chart is escaped here (:func:`esc`).
"""

from __future__ import annotations

import html
import math

from ..read.text import printable

__all__ = ["HEIGHT", "WIDTH", "esc", "line_chart", "nice_ticks", "stacked_chart"]

WIDTH, HEIGHT = 600, 290
# the plot area inside the viewBox; room left for the y labels, below for the x labels
LEFT, RIGHT, TOP, BOTTOM = 58, 20, 14, 44
PAD = 12  # between the y labels and the first point, and after the last


def esc(text) -> str:
    """``text`` as HTML text or attribute value: ``<>&"'`` escaped, and control
    characters and lone surrogates (a non-UTF-8 file name) shown as escapes."""
    return html.escape(printable(str(text)), quote=True)


def nice_ticks(lo: float, hi: float, most: int = 5, integer: bool = False) -> list[float]:
    """Round tick values from ``lo`` to ``hi`` (both included when they are
    multiples of the step), at most ``most + 1`` of them; whole numbers only
    with ``integer``."""
    if hi <= lo:
        return [lo]
    span = hi - lo
    # the smallest step of the 1-2-5 series that gives at most `most` intervals
    steps = sorted(b * 10**p for b in (1, 2, 5) for p in range(0 if integer else -2, 16))
    step = next((s for s in steps if span / s <= most), steps[-1])
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    value = first
    while value <= hi + 1e-9:
        ticks.append(round(value, 6))
        value += step
    return ticks


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def _x(i: int, n: int) -> float:
    inner = WIDTH - LEFT - RIGHT - 2 * PAD
    return LEFT + PAD + inner / 2 if n == 1 else LEFT + PAD + inner * i / (n - 1)


def _y(value: float, lo: float, hi: float) -> float:
    inner = HEIGHT - TOP - BOTTOM
    return TOP + inner * (1 - (value - lo) / (hi - lo or 1))


def _frame(label: str, ticks: list[float], lo: float, hi: float, xlabels: list[tuple[int, str]], n: int) -> list[str]:
    out = [
        # inline in HTML, an <svg> needs no xmlns (and the page names no URL at all)
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{esc(label)}">',
        f"<title>{esc(label)}</title>",
    ]
    for tick in ticks:
        y = _y(tick, lo, hi)
        out.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        out.append(f'<text class="axis" x="{LEFT - 8}" y="{y:.1f}" text-anchor="end" dy="0.35em">{_num(tick)}</text>')
    for i, text in xlabels:
        x = _x(i, n)
        anchor = "middle"
        if n > 1 and i == 0:
            anchor = "start"
        elif n > 1 and i == n - 1:
            anchor = "end"
        out.append(
            f'<text class="axis" x="{x:.1f}" y="{HEIGHT - BOTTOM + 26}" text-anchor="{anchor}">{esc(text)}</text>'
        )
    return out


def _xlabels(labels: list[str]) -> list[tuple[int, str]]:
    """First, last and (with five or more values) the middle label."""
    n = len(labels)
    if n == 0:
        return []
    picks = [0] if n == 1 else [0, n - 1]
    if n >= 5:
        picks.insert(1, (n - 1) // 2)
    return [(i, labels[i]) for i in picks]


def line_chart(values: list[float], labels: list[str], tips: list[str], label: str, lo: float, hi: float) -> str:
    """A line through ``values`` (evenly spaced, in order) on a ``lo``..``hi``
    scale, one ``<circle class="point">`` per value with ``tips[i]`` as its
    tooltip; ``labels`` name the x positions (first, middle and last shown)."""
    n = len(values)
    ticks = nice_ticks(lo, hi)
    out = _frame(label, ticks, lo, hi, _xlabels(labels), n)
    coords = [(_x(i, n), _y(v, lo, hi)) for i, v in enumerate(values)]
    if n > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
        out.append(f'<polyline class="line" points="{path}"/>')
    radius = 4 if n <= 60 else 3 if n <= 200 else 2
    for (x, y), tip in zip(coords, tips, strict=True):
        out.append(f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="{radius}"><title>{esc(tip)}</title></circle>')
    out.append("</svg>")
    return "\n".join(out)


def stacked_chart(rows: list[list[float]], keys: list[str], labels: list[str], label: str) -> str:
    """Stacked bands, one per key (``rows[i][k]`` is key ``k``'s value at
    position ``i``; bottom band first), as areas, or as one bar when there
    is a single position.  Band ``k`` has class ``area sK``."""
    n = len(rows)
    top = max((sum(row) for row in rows), default=0) or 1
    ticks = nice_ticks(0, top, integer=True)
    hi = max(top, ticks[-1])
    if hi > ticks[-1]:  # the top tick above the highest stack, so it stays inside the frame
        step = ticks[1] - ticks[0] if len(ticks) > 1 else hi
        ticks.append(round(ticks[-1] + step, 6))
        hi = ticks[-1]
    out = _frame(label, ticks, 0, hi, _xlabels(labels), n)
    below = [0.0] * n
    for k, key in enumerate(keys):
        above = [below[i] + rows[i][k] for i in range(n)]
        if n == 1:
            x = _x(0, 1) - 30
            y1, y0 = _y(above[0], 0, hi), _y(below[0], 0, hi)
            shape = f'<rect class="area s{k}" x="{x:.1f}" y="{y1:.1f}" width="60" height="{max(y0 - y1, 0):.1f}">'
            out.append(f"{shape}<title>{esc(key)}: {_num(rows[0][k])}</title></rect>")
        else:
            upper = [f"{_x(i, n):.1f},{_y(above[i], 0, hi):.1f}" for i in range(n)]
            lower = [f"{_x(i, n):.1f},{_y(below[i], 0, hi):.1f}" for i in reversed(range(n))]
            out.append(
                f'<polygon class="area s{k}" points="{" ".join(upper + lower)}"><title>{esc(key)}</title></polygon>'
            )
        below = above
    out.append("</svg>")
    return "\n".join(out)
