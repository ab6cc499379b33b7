"""Markdown tables for the results of ``bench_official.py``."""

from __future__ import annotations

from typing import Any

__all__ = ["markdown"]

EXTRA = ("nDTW", "sDTW", "CLS")  # vlneval's only: the official script does not compute them
RATES = {"OSR", "SR", "SPL", "nDTW", "sDTW", "CLS"}


def _speedup(official: float, vlneval: float) -> str:
    """``official / vlneval``, the speed-up (below 1: vlneval is slower)."""
    if vlneval <= 0:
        return "n/a"
    ratio = official / vlneval
    return f"{ratio:.2f}x faster" if ratio >= 1 else f"{ratio:.2f}x (slower)"


def _met(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def _short(commit: str | None) -> str:
    if not commit:
        return "?"
    return commit[:10] + ("+dirty" if commit.endswith("+dirty") else "")


def _cpu(t: dict[str, Any]) -> str:
    """The median CPU time (user + system), when recorded: steadier than wall time under load."""
    return f", CPU {t['cpu_median_s']:.2f} s" if "cpu_median_s" in t else ""


def _cpu_ms(t: dict[str, Any]) -> str:
    return f", CPU {t['cpu_median_s'] * 1e3:.1f} ms" if "cpu_median_s" in t else ""


def _header(r: dict[str, Any]) -> list[str]:
    m = r["machine"]
    pk = m["packages"]
    load = ", ".join(f"{x:.2f}" for x in m["load_average_1_5_15"])
    after = ", ".join(f"{x:.2f}" for x in m.get("load_average_after", ()))
    after = f", after {after}" if after else ""
    return [
        f"### R2R {r['split']} (2,349 episodes): vlneval vs the official `tasks/R2R/eval.py`",
        "",
        f"{r['date']} · `{r['command']}`  ",
        f"{m['cpu']}, {m['nproc']} cores, load average (1, 5, 15 min) before the run {load}{after}; Python "
        f"{m['python']}, numpy {pk['numpy']}, networkx {pk['networkx']} (for the official), "
        f"numba {pk['numba']}; vlneval {pk['vlneval']} (src/ at `{_short(r['vlneval_commit'])}`), "
        f"Matterport3DSimulator at `{_short(r['official_commit'])}`.",
        "",
    ]


def _speed_rows(r: dict[str, Any]) -> list[str]:
    w, ip, sw, fs = r["whole_process"], r["in_process"], r["sweep"], r["first_score"]
    wo, wv = w["official"], w["vlneval"]
    io, iv = ip["official"], ip["vlneval"]
    so, sv = sw["official"], sw["vlneval"]
    fo, fv = fs["official"], fs["vlneval"]
    n = wo["runs"]
    wall_x = wo["median_s"] / wv["median_s"]
    in_x = io["median_s"] / iv["median_s"]
    sweep_x = so["median_s"] / sv["median_s"]
    first_ratio = fv["median_s"] / fo["median_s"]
    return [
        _row("measurement", "official", "vlneval", "vlneval vs official", "target", "met"),
        "|---|---:|---:|---:|---|---|",
        _row(f"whole process, warm cache: wall, median of {n} alternating (min-max)",
             f"{wo['median_s']:.3f} s ({wo['min_s']:.2f}-{wo['max_s']:.2f}){_cpu(wo)}",
             f"{wv['median_s']:.3f} s ({wv['min_s']:.2f}-{wv['max_s']:.2f}){_cpu(wv)}",
             _speedup(wo["median_s"], wv["median_s"]), ">= 2x faster", _met(wall_x >= 2)),
        _row("whole process: peak RSS", f"{wo['peak_rss_mib']:.0f} MiB",
             f"{wv['peak_rss_mib']:.0f} MiB", f"{wv['peak_rss_mib'] / wo['peak_rss_mib']:.2f}x the memory",
             "<= 1x", _met(wv["peak_rss_mib"] <= wo["peak_rss_mib"])),
        _row(f"in process: `{io['api']}` vs `{iv['api']}`, median of {len(iv['score_s'])}",
             f"{io['median_s'] * 1e3:.1f} ms{_cpu_ms(io)}",
             f"{iv['median_s'] * 1e3:.1f} ms{_cpu_ms(iv)}",
             _speedup(io["median_s"], iv["median_s"]), ">= 10x faster", _met(in_x >= 10)),
        _row("in process: set-up, once (not in the row above)", f"{io['setup_s']:.3f} s",
             f"{iv['setup_s']:.3f} s", "", "", ""),
        _row(f"sweep of {sw['files']} files: {so['processes']} official runs vs vlneval "
             f"{sw['vlneval_mode']}, median of {so['repeats']}",
             f"{so['median_s']:.2f} s{_cpu(so)}", f"{sv['median_s']:.2f} s{_cpu(sv)}",
             _speedup(so["median_s"], sv["median_s"]), ">= 10x faster", _met(sweep_x >= 10)),
        _row("sweep: peak RSS (largest process)", f"{so['peak_rss_mib']:.0f} MiB",
             f"{sv['peak_rss_mib']:.0f} MiB", "", "", ""),
        _row(f"first score after install (fresh numba and distance caches), median of "
             f"{fv['runs']}", f"{fo['median_s']:.3f} s{_cpu(fo)}", f"{fv['median_s']:.2f} s{_cpu(fv)}",
             f"{first_ratio:.1f}x the official time", "<= 2x the official", _met(first_ratio <= 2)),
        _row("first score: peak RSS", f"{fo['peak_rss_mib']:.0f} MiB",
             f"{fv['peak_rss_mib']:.0f} MiB", "", "", ""),
    ]  # fmt: skip


def _value(label: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.2f}" if label in RATES else f"{value:.3f}"


def _fidelity_rows(rows: list[dict[str, Any]]) -> list[str]:
    labels = list(rows[0]["official"]) if rows else []
    out = [
        "",
        "Fidelity: the official script's printed summary against vlneval's `r2r` profile "
        "(rates in %, lengths in m; official values shown, vlneval's equal them within 1e-9 "
        "unless marked; nDTW, sDTW and CLS are vlneval's only).",
        "",
        _row("file", *labels, "max abs diff", "agree", *EXTRA),
        "|---|" + "---:|" * len(labels) + "---:|---|" + "---:|" * len(EXTRA),
    ]
    for row in rows:
        cells = [
            _value(k, v)
            + ("" if k not in row["different"] else f" (vlneval {_value(k, row['vlneval'][k])})")
            for k, v in row["official"].items()
        ]
        extra = [_value(k, row["vlneval"].get(k)) for k in EXTRA]
        out.append(_row(row["file"], *cells, f"{row['max_abs_diff']:.1e}",
                        "yes" if row["equal"] else "**no**", *extra))  # fmt: skip
    return out


def markdown(results: dict[str, Any]) -> str:
    """The speed table and the fidelity table."""
    return "\n".join(_header(results) + _speed_rows(results) + _fidelity_rows(results["fidelity"]))
