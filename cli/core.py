"""What every ``memfold`` command shares: the group, its error handling, options and formatting.

:data:`cli` is the click group; the command modules of this package add their commands to it.
:class:`MemfoldGroup` turns a library error into one ``Error: ...`` line on stderr (and, for a
command given ``--json``, one JSON error object on stdout), exit 1 (DESIGN.md §5). Commands open
the facade with :func:`open_db` and reach the library only through it (STYLE.md rule 1).
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any

import click

from .. import InvalidInput, MemfoldError
from ..memory.paths import check_output_path

__all__ = [
    "MemfoldCommand", "MemfoldGroup", "ReportedError", "check_output_path", "cli", "db_argument", "emit_json",
    "format_links", "format_record", "json_option", "main", "open_db", "parse_time", "plural", "reader_from",
    "reader_option",
]


_JSON_META = "memfold.json"  # ctx.meta key: True once the running command was given --json


class ReportedError(click.ClickException):
    """A failure whose details the command already printed on stdout as JSON: the group adds only
    the ``Error: ...`` line on stderr, never a second JSON document."""


class MemfoldCommand(click.Command):
    """A click command that notes in ``ctx.meta`` whether it was given ``--json`` (a flag named
    ``as_json``), so :class:`MemfoldGroup` can report an error as JSON too, usage errors included."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if any(p.name == "as_json" for p in self.params):
            ctx.meta[_JSON_META] = "--json" in args[:args.index("--")] if "--" in args else "--json" in args
        return super().parse_args(ctx, args)


def _warning_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  line: str | None = None) -> str:
    """A warning as the CLI prints it: ``Warning: <message>`` on one line (no file, line or code)."""
    return "Warning: " + " ".join(part.strip() for part in str(message).splitlines() if part.strip()) + "\n"


class MemfoldGroup(click.Group):
    """A click group that turns every :class:`MemfoldError` into one ``Error: ...`` line, exit 1.

    When the failing command was given ``--json`` it also prints
    ``{"error": "<message>", "type": "<ExceptionClass>"}`` on stdout (library errors, click usage
    errors and aborted prompts alike), so a script reading stdout always gets JSON."""

    command_class = MemfoldCommand

    def invoke(self, ctx: click.Context) -> Any:
        formatwarning = warnings.formatwarning
        warnings.formatwarning = _warning_line  # a library warning is one "Warning: ..." line, no source
        try:
            return super().invoke(ctx)
        except MemfoldError as exc:
            self._json_error(ctx, exc, str(exc))
            # one line, even when the message quotes another library's text over several (round 13)
            raise click.ClickException(" ".join(part.strip() for part in str(exc).splitlines() if part.strip())) from None
        except click.Abort as exc:
            self._json_error(ctx, exc, "aborted")
            raise
        except click.ClickException as exc:
            if not isinstance(exc, ReportedError):
                self._json_error(ctx, exc, exc.format_message())
            raise
        finally:
            warnings.formatwarning = formatwarning

    @staticmethod
    def _json_error(ctx: click.Context, exc: BaseException, message: str) -> None:
        """Print the error object on stdout once, if the command was given ``--json``."""
        if ctx.meta.get(_JSON_META):
            ctx.meta[_JSON_META] = False  # once: an enclosing group sees the same meta
            click.echo(json.dumps({"error": message, "type": type(exc).__name__}, ensure_ascii=False))


def db_argument(fn):
    """The ``DB`` argument: a file or a ``postgresql://`` URL (falls back to ``MEMFOLD_DB``)."""
    return click.argument("db", envvar="MEMFOLD_DB", type=click.Path(dir_okay=False))(fn)


def json_option(fn):
    """The ``--json`` flag: machine-readable output on stdout."""
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(fn)


def open_db(db: str, *, must_exist: bool = True, **kwargs: Any):
    """Open the facade on ``db`` (a file, or a ``postgresql://`` URL); a missing file (an empty
    database on a server) is an error unless ``must_exist`` is False."""
    from .. import MemFold
    from ..memory.paths import is_database_url

    if is_database_url(db):
        return MemFold(db, create=not must_exist, **kwargs)
    if must_exist and not os.path.exists(db):
        raise InvalidInput(f"no database at {db}: create it with 'memfold init {db}'")
    if os.path.isdir(db):
        raise InvalidInput(f"{db} is a directory, not a database file")
    kwargs.setdefault("preload_embedder", False)  # a command ends before a background model load would help
    return MemFold(db, create=not must_exist, **kwargs)


def ensure_port_free(host: str, port: int, option: str = "--port") -> None:
    """Refuse, as a usage error (exit status 2), a TCP port another program already listens on,
    before a server starts: uvicorn would otherwise log an ERROR line and exit on its own terms.
    Binds a throw-away socket the way uvicorn binds (``SO_REUSEADDR``); port 0 always works.

    :raises click.BadParameter: naming the address and what to do.
    """
    import socket

    if not port:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return  # an address uvicorn cannot resolve either: it says so itself
    family, kind, proto, _, address = infos[0]
    probe = socket.socket(family, kind, proto)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(address)
    except OSError as exc:
        raise click.BadParameter(
            f"port {port} on {host} is already in use ({exc.strerror or exc}): stop the program holding it, "
            f"choose another with {option} PORT, or {option} 0 for a free one", param_hint=f"'{option}'") from None
    finally:
        probe.close()


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))


READER_HELP = ("Read as a reader holding this access label (repeatable); what needs a label it lacks is "
               "hidden. --reader '' is a reader holding no label (secrets hidden). Without --reader: the "
               "owner, who sees everything.")


def reader_option(fn):
    """The ``--reader LABEL`` option (repeatable; ``--reader ''`` = a reader holding no label)."""
    return click.option("--reader", "reader_labels", multiple=True, metavar="LABEL", help=READER_HELP)(fn)


def reader_from(labels: tuple[str, ...]):
    """The :class:`~memfold.window.labels.Reader` for ``--reader`` values: ``None`` (the owner)
    when the option was not given, else a reader holding the non-empty labels (so ``--reader ''``
    holds none). :raises InvalidInput: for a bad label name."""
    from .. import Reader

    if not labels:
        return None
    held = [label for label in labels if label != ""]
    return Reader.of(held, name=f"a reader holding {', '.join(held) if held else 'no label'}")


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 turn"``, ``"2 turns"`` (``many`` for irregular plurals)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def format_record(record, clock, *, namespace: bool = False) -> str:
    """One human line for a record: id, status, type, key, importance, content (and its
    namespace when ``namespace`` is set: listings that span namespaces need it)."""
    key = f" {record.key}" if record.key else ""
    pin = " pinned" if record.pinned else ""
    ns = f" {record.namespace}" if namespace else ""
    return (f"#{record.id} [{record.status}{pin}]{ns} {record.type}{key} "
            f"importance={record.importance:.2f} written {clock.format(record.written_at)}: {record.content}")


def format_links(record) -> str:
    """The supersession links of a record, for people: `` (supersedes #3, superseded by #7)``."""
    links = []
    if record.supersedes is not None:
        links.append(f"supersedes #{record.supersedes}")
    if record.superseded_by is not None:
        links.append(f"superseded by #{record.superseded_by}")
    return f" ({', '.join(links)})" if links else ""


def parse_time(value: str | None, option: str = "--at") -> object:
    """A time option's value: a number (ticks or POSIX seconds) or an ISO-8601 time with a UTC offset.

    :param option: the option's name for messages (``--at``, ``--due``).
    :raises InvalidInput: naming ``option`` for text that is neither, or an ISO time without offset.
    """
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    from datetime import datetime

    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"{option} {value!r} is neither a number nor an ISO-8601 time such as "
                           "2026-01-31T12:00:00+00:00") from None
    if when.tzinfo is None or when.utcoffset() is None:
        raise InvalidInput(f"{option} {value!r} has no timezone: add a UTC offset, e.g. 2027-01-01T00:00:00+00:00")
    return when


@click.group(cls=MemfoldGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memfold")
def cli() -> None:
    """memfold: keep an agent's context small without forgetting by accident.

    Every command takes the database file as DB (or from MEMFOLD_DB), prints for people by
    default and JSON with --json.
    """


def main() -> None:  # pragma: no cover - console entry point
    """Run the ``memfold`` command line."""
    cli()
