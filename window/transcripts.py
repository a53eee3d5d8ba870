"""Transcripts in the OpenAI chat-messages JSONL shape: one message object per line.

Each line holds ``role``, ``content`` and optionally ``name``, ``tool_calls``, ``tool_call_id``
(plus memfold's optional ``created_at``, ``metadata`` and ``labels``, which an export writes so an
import restores the same turns for the same readers; an erased turn is exported as a marker line,
``"erased": true`` and no text, which an import refuses). Reading is all-or-nothing:
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
        except RecursionError:  # json's decoder recurses once per nesting level
            raise InvalidInput(f"{source} line {number}: nested too deeply to read") from None
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


def export_message(turn: Turn, *, with_times: bool = False) -> dict[str, Any]:
    """One turn as the JSONL line :func:`write_jsonl` writes: the chat message, plus the turn's
    ``labels`` and ``metadata`` when it has any (what an import needs to restore the same turn for
    the same readers: a turn's labels are what hides it), and ``created_at`` with ``with_times``.

    An erased turn is a marker, ``{"role": ..., "content": "", "erased": true}`` (with its labels,
    its ``tool_call_id`` and time where it has them): its text is gone and none is written. An
    import refuses such a line (:func:`~memfold.window.archive.normalize_turn`): a turn is never
    appended erased."""
    if turn.erased:
        msg: dict[str, Any] = {"role": turn.role, "content": "", "erased": True}
        if turn.tool_call_id is not None:
            msg["tool_call_id"] = turn.tool_call_id
    else:
        msg = turn.message()
        if turn.metadata:
            msg["metadata"] = turn.metadata
    if turn.labels:
        msg["labels"] = list(turn.labels)
    if with_times:
        msg["created_at"] = turn.created_at
    return msg


def write_jsonl(turns: Iterable[Turn], out: TextIO, *, with_times: bool = False) -> int:
    """Write turns as JSONL chat messages (:func:`export_message`); returns the number of lines written.

    :param with_times: also write ``created_at`` (clock units) so a re-import keeps times.
    """
    n = 0
    for turn in turns:
        out.write(json.dumps(export_message(turn, with_times=with_times), ensure_ascii=False) + "\n")
        n += 1
    return n
