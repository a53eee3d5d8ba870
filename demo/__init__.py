"""The seed demo (issue 7): ``memfold demo`` / ``python -m memfold.demo``.

Three acts on a logical clock with word tokens, through the public API only, printed byte for
byte the same on every run: compaction of a ten-turn support ticket under a 40-word budget,
forgetting by score, supersession and eviction, and the consolidation of four episodes into a
fact and a rule. :func:`run_demo` returns the transcript and its figures; :func:`plot_meter`
draws the window meter.
"""

from .acts import DemoResult, MeterRow, run_demo
from .plot import plot_meter

__all__ = ["DemoResult", "MeterRow", "plot_meter", "run_demo"]
