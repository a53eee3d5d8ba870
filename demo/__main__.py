"""``python -m memfold.demo``: the same as ``memfold demo`` (same options)."""

from ..cli import demo

if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in tests
    demo(prog_name="python -m memfold.demo")
