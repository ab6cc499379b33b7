"""Paper-ready tables: Markdown (GitHub pipes) and LaTeX (booktabs ``tabular``).

Cells are plain text; this module escapes what each format needs (``|`` in Markdown; ``& % $ #
_ { } ~ ^ \\`` in LaTeX), so user-provided names (file names, run labels) come out as written.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["TABLE_FORMATS", "render_table", "markdown_table", "latex_table", "latex_escape"]

#: The formats of the tables printed on stdout (``--format``).
TABLE_FORMATS = ("text", "markdown", "latex")

_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped.

    Example:
        >>> print(latex_escape("SR (%) of run_1 & 2"))
        SR (\\%) of run\\_1 \\& 2
    """
    return "".join(_LATEX.get(ch, ch) for ch in text)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """A GitHub-flavoured Markdown table; ``align`` has one ``l`` or ``r`` per column.

    Example:
        >>> print(markdown_table(["run", "SR (%)"], [["a|b", "50.00"]], "lr"), end="")
        | run | SR (%) |
        | :--- | ---: |
        | a\\|b | 50.00 |
    """

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |\n"

    rule = "| " + " | ".join(":---" if a == "l" else "---:" for a in align) + " |\n"
    return line(header) + rule + "".join(line(r) for r in rows)


def latex_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], align: str, *, note: str | None = None
) -> str:
    """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``); ``note`` as a comment above.

    Example:
        >>> print(latex_table(["SR (%)"], [["50.00"]], "r"), end="")
        \\begin{tabular}{r}
        \\toprule
        SR (\\%) \\\\
        \\midrule
        50.00 \\\\
        \\bottomrule
        \\end{tabular}
    """

    def line(cells: Sequence[str]) -> str:
        return " & ".join(latex_escape(c) for c in cells) + " \\\\\n"

    head = "".join(f"% {part}\n" for part in (note or "").splitlines() if part)
    return (
        f"{head}\\begin{{tabular}}{{{align}}}\n\\toprule\n{line(header)}\\midrule\n"
        + "".join(line(r) for r in rows)
        + "\\bottomrule\n\\end{tabular}\n"
    )


def render_table(
    fmt: str,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    align: str,
    *,
    note: str | None = None,
) -> str:
    """The table in ``fmt`` (``markdown`` or ``latex``); ``note`` (what the table is) goes
    above it: a paragraph in Markdown, a comment in LaTeX.

    Example:
        >>> print(render_table("markdown", ["SR (%)"], [["50.00"]], "r", note="demo val"), end="")
        demo val
        <BLANKLINE>
        | SR (%) |
        | ---: |
        | 50.00 |
    """
    if fmt == "latex":
        return latex_table(header, rows, align, note=note)
    if fmt == "markdown":
        return (f"{note}\n\n" if note else "") + markdown_table(header, rows, align)
    raise ValueError(f"unknown table format {fmt!r}; use markdown or latex")
