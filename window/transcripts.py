"""Transcripts in the OpenAI chat-messages JSONL shape: one message object per line.

Each line holds ``role``, ``content`` and optionally ``name``, ``tool_calls``, ``tool_call_id``
(plus memfold's optional ``created_at``, ``metadata`` and ``labels``). Reading is all-or-nothing:
every line is parsed and validated before anything is appended, and a malformed line is reported
with its line number.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, TextIO

from ..memory.errors import InvalidInput
from .archive import Turn


def parse_jsonl(text: str, *, source: str = "input") -> list[dict[str, Any]]:
    """Parse JSONL text into message dicts (blank lines are skipped).

    :raises InvalidInput: ``"<source> line N: ..."`` for invalid JSON or a non-object line.
    """
    messages = []
    if text.startswith("\ufeff"):  # a UTF-8 byte-order mark, as Windows editors write it
        text = text[1:]
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{source} line {number}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise InvalidInput(f"{source} line {number}: expected a message object, got {type(obj).__name__}")
        obj["__line__"] = number
        messages.append(obj)
    return messages


def read_jsonl(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read and parse a JSONL file. :raises InvalidInput: for unreadable files or bad lines."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    return parse_jsonl(text, source=str(path))


def write_jsonl(turns: Iterable[Turn], out: TextIO, *, with_times: bool = False) -> int:
    """Write turns as JSONL chat messages; returns the number of lines written.

    :param with_times: also write ``created_at`` (clock units) so a re-import keeps times.
    """
    n = 0
    for turn in turns:
        msg = turn.message()
        if with_times:
            msg["created_at"] = turn.created_at
        out.write(json.dumps(msg, ensure_ascii=False) + "\n")
        n += 1
    return n
