"""The window meter as a picture (``memfold demo --plot FILE.png``).

matplotlib is imported inside :func:`plot_meter` with the Agg backend, so the CLI starts fast and
no display is needed.
"""

from __future__ import annotations

import os
from typing import Sequence

from .acts import MeterRow


def plot_meter(rows: Sequence[MeterRow], budget_tokens: int, path: str | os.PathLike) -> None:
    """Draw window tokens per turn against the budget, marking each compaction, into a PNG.

    :param rows: the meter, one row per turn (tokens right after the append, and after compaction).
    :param budget_tokens: the usable budget drawn as a horizontal line (tokens).
    :param path: the PNG file to write.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    turns = [r.turn for r in rows]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    ax.axhline(budget_tokens, color="tab:red", linestyle="--", linewidth=1.5, label=f"budget ({budget_tokens} words)")
    shown = [r.after if r.after is not None else r.tokens for r in rows]
    ax.plot(turns, shown, color="tab:blue", marker="o", label="window after the turn (after compaction)")
    first = True
    for r in rows:
        if r.after is None:
            continue
        ax.scatter([r.turn], [r.tokens], color="tab:red", marker="^", zorder=3,
                   label="over budget: compacted" if first else None)
        ax.annotate("", xy=(r.turn, r.after), xytext=(r.turn, r.tokens),
                    arrowprops={"arrowstyle": "->", "color": "tab:red"})
        ax.text(r.turn + 0.1, r.tokens, f"{r.tokens}->{r.after}", fontsize=8, color="tab:red", va="bottom")
        first = False
    ax.set_xticks(turns)
    ax.set_xlabel("turn (one archived message)")
    ax.set_ylabel("compiled context (words)")
    ax.set_ylim(0, max([budget_tokens] + [r.tokens for r in rows]) * 1.2)
    ax.set_title("memfold demo: the window meter")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)
