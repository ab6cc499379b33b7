"""What every plot shares: lazy matplotlib (Agg, no pyplot), colours, PNG encoding.

Figures are built with ``matplotlib.figure.Figure`` directly, never ``pyplot``: no global
figure registry, no GUI backend, nothing to close, safe in a server thread.
"""

from __future__ import annotations

import base64
import functools
import io
from typing import Any, Literal

from vlneval.errors import VLNEvalError

__all__ = [
    "COLORS",
    "RUN_COLORS",
    "MISSING_GLYPH",
    "new_figure",
    "figure_png",
    "drawable_text",
    "png_data_uri",
    "require_matplotlib",
]

#: Colours of run A and run B (and more) in every plot that shows runs, episode plots included:
#: blue and orange (Okabe & Ito's colour-blind-safe palette), then reddish purple and sky blue.
RUN_COLORS = ("#0072b2", "#e69f00", "#cc79a7", "#56b4e9")
#: Where runs are drawn, no run colour means anything else: the goal (its star, the rim of its
#: region, δ in the error plot) is near-black, success bluish green and failure dark red, which
#: stay apart from each other and from both runs' colours under protanopia and deuteranopia.
COLORS = {
    "graph_edge": "#d4d4d4",
    "graph_node": "#a8a8a8",
    "reference": "#009e73",
    "executed": RUN_COLORS[0],
    "goal_fill": "#ced4da",
    "goal_edge": "#212529",
    "start": "#ffffff",
    "fail": "#b2182b",
    "success": "#009e73",
    "neutral": "#495057",
    "grid": "#e9ecef",
}
DPI = 110
#: Fonts that draw the scripts DejaVu Sans lacks (CJK above all), used for a run name's
#: characters when one of them is installed; matplotlib falls back glyph by glyph.
_FALLBACK_FONTS = (
    "Noto Sans CJK JP", "Noto Sans CJK SC", "Source Han Sans", "WenQuanYi Zen Hei",
    "Droid Sans Fallback", "Noto Sans", "Arial Unicode MS",
)  # fmt: skip
#: Drawn instead of a character no installed font has (matplotlib would draw a box and warn
#: once per glyph on stderr); the HTML around the figure shows the full name.
MISSING_GLYPH = "?"

_RC: dict[str, Any] = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#868e96",
    "axes.grid": False,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "svg.hashsalt": "vlneval",
}


def require_matplotlib() -> Any:
    """The ``matplotlib`` module, configured once; a clear error when it is not installed."""
    try:
        import matplotlib  # deferred: matplotlib
    except ImportError as exc:
        raise VLNEvalError(
            "plots need matplotlib: pip install 'vlneval[plots]' (or 'vlneval[report]')"
        ) from exc
    matplotlib.rcParams.update(_RC)  # type: ignore[arg-type]
    matplotlib.rcParams["font.family"] = list(_font_families())
    return matplotlib


@functools.cache
def _font_families() -> tuple[str, ...]:
    """DejaVu Sans, then the installed ones of :data:`_FALLBACK_FONTS`."""
    from matplotlib import font_manager  # deferred: matplotlib

    installed = {f.name for f in font_manager.fontManager.ttflist}
    return ("DejaVu Sans", *(f for f in _FALLBACK_FONTS if f in installed))


@functools.cache
def _drawable() -> frozenset[int]:
    """The code points some font of :func:`_font_families` has a glyph for."""
    from matplotlib import font_manager  # deferred: matplotlib
    from matplotlib.ft2font import FT2Font  # deferred: matplotlib

    points: set[int] = set()
    for family in _font_families():
        prop = font_manager.FontProperties(family=family)
        points.update(FT2Font(font_manager.findfont(prop)).get_charmap())
    return frozenset(points)


def drawable_text(text: str) -> str:
    """``text`` with every character no installed font can draw replaced by
    :data:`MISSING_GLYPH` (line breaks kept).

    Example:
        >>> drawable_text("run δ ≤ 3 m"), drawable_text("模型_a") in ("模型_a", "??_a")
        ('run δ ≤ 3 m', True)
    """
    if text.isascii():
        return text
    ok = _drawable()
    return "".join(c if ord(c) in ok or c == "\n" else MISSING_GLYPH for c in text)


def new_figure(width: float, height: float, *, layout: Literal["constrained"] | None = None) -> Any:
    """A new ``matplotlib.figure.Figure`` of ``width`` x ``height`` inches (Agg canvas).

    ``layout=None`` (fixed margins set by the caller) renders about three times faster than
    ``"constrained"``, which matters for the many episode plots of a report.

    Example:
        >>> fig = new_figure(2, 1)
        >>> png = figure_png(fig)
        >>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
        True
    """
    require_matplotlib()
    from matplotlib.figure import Figure  # deferred: matplotlib

    return Figure(figsize=(width, height), dpi=DPI, layout=layout)


def figure_png(fig: Any, *, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes (no timestamp metadata, so the bytes are reproducible); a
    character no installed font has is drawn as :data:`MISSING_GLYPH` (:func:`drawable_text`;
    tick labels are set at drawing time, so a plot passes its own through it)."""
    from matplotlib.text import Text  # deferred: matplotlib

    for text in fig.findobj(Text):
        shown = drawable_text(text.get_text())
        if shown != text.get_text():
            text.set_text(shown)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def png_data_uri(png: bytes) -> str:
    """A ``data:image/png;base64,...`` URI for an ``<img src>``.

    Example:
        >>> png_data_uri(b"abc")
        'data:image/png;base64,YWJj'
    """
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
