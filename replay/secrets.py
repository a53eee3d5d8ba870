"""Secret detection moved into the library (:mod:`memfold.window.secrets`), so every append is
checked; this module re-exports it for existing imports."""

from ..window.secrets import SECRET_MASK, SecretDetector, redact

__all__ = ["SECRET_MASK", "SecretDetector", "redact"]
