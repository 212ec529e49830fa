"""What every experiment produces: a titled table (markdown) and a figure of curves (PNG).

An experiment returns a :class:`Result`: its rows (dicts with the same keys), a title, and the
panels of its figure as plain arrays. :meth:`Result.save` writes ``<name>.md`` and, when
matplotlib is installed (``pip install 'smartboost[plot]'``), ``<name>.png``; the tables need
nothing beyond numpy.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Line", "Panel", "Result", "markdown_table", "matplotlib_available"]


@dataclass
class Line:
    """One curve of a panel; ``spread`` (same length as ``y``) is drawn as a +-band around it."""

    label: str
    x: np.ndarray
    y: np.ndarray
    spread: np.ndarray | None = None


@dataclass
class Panel:
    """One plot of a figure: its axes and lines."""

    xlabel: str
    ylabel: str
    lines: list[Line]
    xscale: str = "linear"
    yscale: str = "linear"
    ylim: tuple[float, float] | None = None


@dataclass
class Result:
    """A finished experiment.

    Attributes
    ----------
    name : str
        File stem of the saved table and figure.
    title : str
    rows : list of dict
        The table; every row has the same keys.
    panels : list of Panel
        The figure (side by side); empty for table-only experiments.
    """

    name: str
    title: str
    rows: list[dict[str, Any]]
    panels: list[Panel] = field(default_factory=list)

    def markdown(self) -> str:
        """The title as a heading, then the table."""
        return f"### {self.title}\n\n{markdown_table(self.rows)}"

    def save(self, folder: str | Path, plot: bool = True) -> list[Path]:
        """Write ``<name>.md``, and ``<name>.png`` when ``plot`` and the result has panels.

        Returns
        -------
        list of Path
            The files written.

        Raises
        ------
        ImportError
            ``plot`` is true, the result has panels and matplotlib is not installed.
        """
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        table = folder / f"{self.name}.md"
        table.write_text(self.markdown() + "\n")
        written = [table]
        if plot and self.panels:
            written.append(_plot(self.panels, folder / f"{self.name}.png", self.title))
        return written


def matplotlib_available() -> bool:
    """Whether matplotlib can be imported (figures need it, tables do not)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "nan"
        return f"{value:.5g}" if abs(value) < 1e5 else f"{value:.0f}"
    return str(value)


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """Rows of dicts with the same keys as a markdown table (floats to 5 significant digits)."""
    if not rows:
        return ""
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(_cell(row[k]) for k in keys) + " |" for row in rows]
    return "\n".join(lines)


def _plot(panels: Sequence[Panel], path: Path, title: str) -> Path:
    from ..plotting import pyplot

    plt = pyplot(headless=True)
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        for line in panel.lines:
            ax.plot(line.x, line.y, label=line.label, marker="o" if line.spread is not None else None)
            if line.spread is not None:
                ax.fill_between(line.x, line.y - line.spread, line.y + line.spread, alpha=0.15)
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel)
        ax.set_xscale(panel.xscale)
        ax.set_yscale(panel.yscale)
        if panel.ylim is not None:
            ax.set_ylim(*panel.ylim)
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=8)
    fig.suptitle(textwrap.fill(title, 85 * len(panels)), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
