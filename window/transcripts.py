"""Transcripts in the OpenAI chat-messages JSONL shape: one message object per line.

Each line holds ``role``, ``content`` and optionally ``name``, ``tool_calls``, ``tool_call_id``
(plus memfold's optional ``created_at``, ``metadata`` and ``labels``, which an export writes so an
import restores the same turns for the same readers; an erased turn is exported as a marker line,
``"erased": true`` and no text, which an import refuses). Two more fields describe the conversation,
not the turn, and every line of an export repeats them, so each line stays one chat message that
any subset of the file still explains: ``conversation_labels`` (the labels of a labelled
conversation, which an import gives the conversation it creates, so turns appended there later
are hidden from the same readers) and, beside ``created_at``, ``"clock": "logical"`` on a
logical-clock database's export (its times are ticks, not POSIX seconds; ``"system"`` is read
too, and a line without ``clock`` is read as before). Both are written only when they say
something, so an export of an unlabelled system-clock conversation is what older readers read.
Reading is all-or-nothing:
every line is parsed and validated before anything is appended, and a malformed line is reported
with its line number.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, TextIO

from ..memory.errors import DuplicateKey, InvalidInput
from ..memory.validation import check_labels
from .archive import Turn, normalize_turn

if TYPE_CHECKING:  # pragma: no cover
    from ..memory.clock import Clock

#: the conversation-level fields an export writes on every line (beside the turn's own fields)
CONVERSATION_LABELS = "conversation_labels"
CLOCK = "clock"
CLOCK_KINDS = ("logical", "system")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s object hook: the object, refusing a key given twice (``{"role": "user",
    ..., "role": "assistant"}`` silently became an assistant turn: the last one won)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        raise DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return obj


def loads_unique(text: str | bytes) -> Any:
    """``json.loads`` refusing a key given twice in any object: what the JSONL reader and the
    HTTP API's bodies use (issue 20, points 3 and 12).

    :raises DuplicateKey: an :class:`InvalidInput` naming the key.
    :raises json.JSONDecodeError, ValueError, RecursionError: as ``json.loads`` does.
    """
    return json.loads(text, object_pairs_hook=_unique_keys)


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
            obj = loads_unique(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{source} line {number}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:  # json's decoder recurses once per nesting level
            raise InvalidInput(f"{source} line {number}: nested too deeply to read") from None
        except DuplicateKey as exc:
            raise InvalidInput(f"{source} line {number}: {exc}") from None
        except ValueError as exc:  # a number past Python's 4,300-digit limit (round 15: a traceback)
            why = "a number has more digits than can be read (at most 4,300)" if "digits" in str(exc) else str(exc)
            raise InvalidInput(f"{source} line {number}: not valid JSON ({why})") from None
        if not isinstance(obj, dict):
            raise InvalidInput(f"{source} line {number}: expected a message object, got {type(obj).__name__}")
        obj["__line__"] = number
        messages.append(obj)
    return messages


def read_jsonl(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read and parse a JSONL file. :raises InvalidInput: for unreadable files or bad lines."""
    if not isinstance(path, (str, os.PathLike)):  # open(5) would read (and then close) file descriptor 5
        raise InvalidInput(f"a JSONL file must be a path (str or os.PathLike), got {type(path).__name__} {path!r}")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    return parse_jsonl(text, source=str(path))


def export_message(turn: Turn, *, with_times: bool = False, conversation_labels: Iterable[str] = (),
                   clock: str | None = None) -> dict[str, Any]:
    """One turn as the JSONL line :func:`write_jsonl` writes: the chat message, plus the turn's
    ``labels`` and ``metadata`` when it has any (what an import needs to restore the same turn for
    the same readers: a turn's labels are what hides it), and ``created_at`` with ``with_times``.

    An erased turn is a marker, ``{"role": ..., "content": "", "erased": true}`` (with its labels,
    its ``tool_call_id`` and time where it has them): its text is gone and none is written. An
    import refuses such a line (:func:`~memfold.window.archive.normalize_turn`): a turn is never
    appended erased.

    :param conversation_labels: the conversation's own labels, written as ``conversation_labels``
        when there are any.
    :param clock: the kind of clock ``created_at`` is on, written as ``clock`` with ``with_times``."""
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
    conversation_labels = list(conversation_labels)
    if conversation_labels:
        msg[CONVERSATION_LABELS] = conversation_labels
    if with_times:
        msg["created_at"] = turn.created_at
        if clock is not None:
            msg[CLOCK] = clock
    return msg


def write_jsonl(turns: Iterable[Turn], out: TextIO, *, with_times: bool = False,
                conversation_labels: Iterable[str] = (), clock: str | None = None) -> int:
    """Write turns as JSONL chat messages (:func:`export_message`); returns the number of lines written.

    :param with_times: also write ``created_at`` (clock units) so a re-import keeps times, with
        the ``clock`` kind they are on.
    :param conversation_labels: the conversation's labels, written on every line when it has any.
    """
    conversation_labels = list(conversation_labels)
    n = 0
    for turn in turns:
        msg = export_message(turn, with_times=with_times, conversation_labels=conversation_labels, clock=clock)
        out.write(json.dumps(msg, ensure_ascii=False) + "\n")
        n += 1
    return n


@dataclass(frozen=True)
class ExportFields:
    """What the lines of a file say about their conversation (:func:`take_export_fields`).

    :ivar labels: the ``conversation_labels`` its lines carry; ``None`` when no line carries any
        (an export of an unlabelled conversation, or a file not written by an export).
    :ivar clock: the ``clock`` kind its ``created_at`` times are on; ``None`` when not said.
    """

    labels: list[str] | None = None
    clock: str | None = None


def take_export_fields(messages: list[dict[str, Any]], *, source: str = "input") -> ExportFields:
    """Remove the conversation-level fields from parsed lines (:func:`parse_jsonl`'s dicts, with
    their ``__line__``) and return what they say. Every line that carries one must say the same
    (one file is one conversation); a line without them says nothing (older exports).

    :raises InvalidInput: ``"<source> line N: ..."`` for a bad value or one that differs from an
        earlier line's."""
    labels: list[str] | None = None
    clock: str | None = None
    first: dict[str, Any] = {}
    for msg in messages:
        where = f"{source} line {msg.get('__line__')}"
        if CONVERSATION_LABELS in msg:
            given = check_labels(msg.pop(CONVERSATION_LABELS), f"{where}: {CONVERSATION_LABELS}")
            if labels is None:
                labels, first[CONVERSATION_LABELS] = given, msg.get("__line__")
            elif given != labels:
                raise InvalidInput(f"{where}: {CONVERSATION_LABELS} {given!r} differ from line "
                                   f"{first[CONVERSATION_LABELS]}'s {labels!r}: a file is one conversation")
        if CLOCK in msg:
            kind = msg.pop(CLOCK)
            if kind not in CLOCK_KINDS:
                raise InvalidInput(f"{where}: clock must be 'logical' or 'system', got {kind!r}")
            if clock is None:
                clock, first[CLOCK] = kind, msg.get("__line__")
            elif kind != clock:
                raise InvalidInput(f"{where}: clock {kind!r} differs from line {first[CLOCK]}'s {clock!r}: "
                                   f"a file's times are on one clock")
    return ExportFields(labels, clock)


def read_import(path: str | os.PathLike, clock: "Clock") -> tuple[list[dict[str, Any]], ExportFields]:
    """Read, parse and validate a JSONL transcript for an import into a database on ``clock``:
    the messages (each line's own fields, ready to append) and what the lines say of their
    conversation. Writes nothing.

    :raises InvalidInput: ``"<path> line N: ..."`` for the first bad line, or times written on
        another kind of clock than ``clock`` (ticks are no POSIX seconds, and the reverse)."""
    messages = read_jsonl(path)
    fields = take_export_fields(messages, source=str(path))
    if fields.clock is not None and fields.clock != clock.kind and any("created_at" in m for m in messages):
        unit = "ticks" if fields.clock == "logical" else "POSIX seconds"
        raise InvalidInput(f"{path}: its created_at times are {fields.clock}-clock {unit} (the lines' \"clock\"), "
                           f"but this database runs on the {clock.kind} clock: import it into a "
                           f"{fields.clock}-clock database, or drop created_at and clock from the lines")
    out = []
    for msg in messages:
        line = msg.pop("__line__")
        normalize_turn(msg, clock, where=f"{path} line {line}: ")
        out.append(msg)
    return out, fields
