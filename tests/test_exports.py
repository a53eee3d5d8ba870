"""The public surface: ``memfold.__all__`` is sorted, resolves, and is complete; one name per concept.

"Public" is defined here, and computed from the code, so a new error, part or implementation
cannot be forgotten in ``__init__.py`` (STYLE.md rule 3). It covers the library layers below the
facade, ``memfold.memory``, ``memfold.window`` and ``memfold.consolidation`` (replay, demo, the CLI
and the integrations sit above the facade and are reached through their own entry points). A
name with a leading underscore is never public. These are public:

1. **The error tree**: every subclass of :class:`MemfoldError` defined anywhere in memfold. Each
   one is defined in ``memfold.memory.errors`` and drawn in that module's docstring.
2. **The parts' interfaces and their shipped implementations**: every abstract base class of the
   library layers (the interface of a part the facade injects: clock, token counter, embedder,
   summarizer, extractor, constraint extractor; STYLE.md rule 7) and every class of the library
   layers that subclasses one.
3. **What a part's author or user has to name**: the memfold classes named in the annotations of
   an interface's abstract methods (``Extractor.extract(episodes: Sequence[Episode]) ->
   list[Proposal]``) and of a shipped implementation's constructor (``LLMSummarizer(settings:
   LLMSettings)``), and, transitively, in the fields of those that are dataclasses
   (``Extraction.proposals: list[ConstraintProposal]``).
4. **Factories and package front doors**: every ``make_*`` function of the library layers, and
   every class or function a library package lists in its ``__all__`` (a layer package or a
   package directly inside one, such as ``memfold.memory.storage``; a backend's own package,
   ``memfold.memory.storage.sqlite``, lists its internals for the storage package only).

Plus the facade :class:`MemFold` and whatever else ``__init__.py`` chooses to export (the record
and window types); :func:`test_all_is_sorted_and_resolves` keeps every entry real.

One name per concept: no two classes of the library layers share a public name, and the facade
exports every class and function under its own name (no ``import X as Y``).
"""

from __future__ import annotations

import abc
import dataclasses
import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import memfold
from memfold.memory import errors

LAYERS = ("memory", "window", "consolidation")


def _modules(package: str) -> list[ModuleType]:
    """Every module of memfold's ``package`` (itself included), imported."""
    root = importlib.import_module(package)
    found = [root]
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        found.append(importlib.import_module(info.name))
    return found


def _library_modules() -> list[ModuleType]:
    return [m for layer in LAYERS for m in _modules(f"memfold.{layer}")]


def _defined(module: ModuleType) -> dict[str, object]:
    """The classes and functions ``module`` defines itself under a public name."""
    return {name: obj for name, obj in vars(module).items()
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__module__ == module.__name__
            and not name.startswith("_")}


def _library_classes() -> dict[str, type]:
    """Public classes of the library layers by name (names are unique: see the test below)."""
    return {name: obj for m in _library_modules() for name, obj in _defined(m).items() if inspect.isclass(obj)}


def _named_classes(annotation: object, classes: dict[str, type]) -> set[type]:
    """The library classes an annotation names (annotations are strings under
    ``from __future__ import annotations``; TYPE_CHECKING-only imports resolve the same way)."""
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return {classes[word] for word in re.findall(r"[A-Za-z_]\w*", text) if word in classes}


def _is_interface(cls: type) -> bool:
    return abc.ABC in cls.__bases__ or inspect.isabstract(cls)


def public_names() -> set[str]:
    """Every public name by rules 1-4 of the module docstring."""
    names: set[str] = set()
    # 1. the error tree, wherever an error is defined
    for m in _library_modules() + _modules("memfold.replay") + [importlib.import_module("memfold.cli")]:
        names |= {n for n, obj in _defined(m).items() if inspect.isclass(obj) and issubclass(obj, memfold.MemfoldError)}
    classes = _library_classes()
    # 2. interfaces and their shipped implementations
    interfaces = [cls for cls in classes.values() if _is_interface(cls)]
    implementations = [cls for cls in classes.values()
                       if any(issubclass(cls, i) for i in interfaces) and not _is_interface(cls)]
    names |= {cls.__name__ for cls in interfaces + implementations}
    # 3. what their signatures name, then the dataclass fields of that, transitively
    pending: set[type] = set()
    for cls in interfaces:
        for _, method in inspect.getmembers(cls, inspect.isfunction):
            if getattr(method, "__isabstractmethod__", False):
                for annotation in method.__annotations__.values():
                    pending |= _named_classes(annotation, classes)
    for cls in implementations:
        if "__init__" in vars(cls):
            for annotation in vars(cls)["__init__"].__annotations__.values():
                pending |= _named_classes(annotation, classes)
    seen: set[type] = set()
    while pending:
        cls = pending.pop()
        seen.add(cls)
        if dataclasses.is_dataclass(cls):
            for f in dataclasses.fields(cls):
                pending |= _named_classes(f.type, classes) - seen
    names |= {cls.__name__ for cls in seen}
    # 4. factories and package front doors
    for m in _library_modules():
        names |= {n for n, obj in _defined(m).items() if inspect.isfunction(obj) and n.startswith("make_")}
        is_front_door = hasattr(m, "__path__") and m.__name__.count(".") <= 2
        for n in getattr(m, "__all__", ()) if is_front_door else ():
            obj = getattr(m, n)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and not n.startswith("_"):
                names.add(n)
    return names


def test_all_is_sorted_and_resolves():
    assert memfold.__all__ == sorted(memfold.__all__)
    assert len(memfold.__all__) == len(set(memfold.__all__)), "a name is listed twice"
    for name in memfold.__all__:
        assert hasattr(memfold, name), name


def test_all_is_complete():
    missing = sorted(public_names() - set(memfold.__all__))
    assert not missing, f"public but not in memfold.__all__ (import them in __init__.py): {missing}"


def test_the_definition_finds_each_kind_of_public_name():
    """The rules above find what they are meant to (so the completeness test cannot pass empty)."""
    found = public_names()
    for name in ("LLMError", "StorageConflict",  # 1
                 "Clock", "ReplayClock", "Summarizer", "ExtractiveSummarizer", "ConstraintExtractor",  # 2
                 "Episode", "Proposal", "Extraction", "ConstraintProposal", "Withdrawal", "LLMSettings",  # 3
                 "make_embedder", "open_storage", "Storage", "SqliteStorage"):  # 4
        assert name in found, name
    for name in ("SqliteDB", "Compactor", "run_summarizer", "ReportedError", "MemfoldCommand"):
        assert name not in found, name


def test_one_class_per_public_name_in_the_library_layers():
    owners: dict[str, set[str]] = {}
    for m in _library_modules():
        for name, obj in _defined(m).items():
            if inspect.isclass(obj):
                owners.setdefault(name, set()).add(m.__name__)
    shared = {name: sorted(mods) for name, mods in owners.items() if len(mods) > 1}
    assert not shared, f"one name, several classes (give each concept its own name): {shared}"


def test_search_hits_and_recall_hits_are_two_named_concepts(db_path):
    """The hybrid ranker returns :class:`SearchHit` (turns, cards and records; higher is better);
    the recall tool returns :class:`RecallHit` (a conversation position and a snippet; lower is
    better). One class each, each under its own name."""
    from memfold.memory import search
    from memfold.window import recall

    assert not hasattr(recall, "SearchHit") and not hasattr(search, "RecallHit")
    assert recall.search.__annotations__["return"] == "list[RecallHit]"
    assert search.HybridSearch.search.__annotations__["return"] == "list[SearchHit]"
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words", embedder="hashing") as mf:
        conv = mf.conversation("c1")
        conv.append({"role": "user", "content": "my parcel tracking number is 4471"})
        ranked = mf.search("parcel tracking")
        shown = conv.search("parcel tracking")
    assert [type(h) for h in ranked] == [memfold.SearchHit] and ranked[0].kind == "turn"
    assert [type(h) for h in shown] == [memfold.RecallHit] and shown[0].ref == f"t{ranked[0].id}"
    assert shown[0].score == ranked[0].score  # the recall view of the same ranked hit: higher is better too


def test_exports_keep_their_own_names():
    for name in memfold.__all__:
        obj = getattr(memfold, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__name__ == name, f"memfold.{name} is {obj.__module__}.{obj.__name__} under another name"


def test_every_error_is_in_the_tree_exported_and_derives_from_memfold_error():
    error_classes = [obj for _, obj in inspect.getmembers(errors, inspect.isclass) if issubclass(obj, Exception)
                     and obj.__module__ == errors.__name__]
    assert len(error_classes) > 15
    for cls in error_classes:
        assert issubclass(cls, memfold.MemfoldError)
        assert cls.__name__ in memfold.__all__, f"{cls.__name__} is not exported"
        assert re.search(rf"[─ ]{cls.__name__}\b", errors.__doc__), f"{cls.__name__} is not drawn in the tree"
    for m in _library_modules() + _modules("memfold.replay"):
        for name, obj in _defined(m).items():
            if inspect.isclass(obj) and issubclass(obj, memfold.MemfoldError):
                assert obj.__module__ == errors.__name__, f"{m.__name__}.{name}: define errors in memory/errors.py"


def test_llm_error_joins_the_tree_and_keeps_its_old_import():
    from memfold.memory.llm import LLMError

    assert LLMError is memfold.LLMError is errors.LLMError
    assert issubclass(LLMError, memfold.MemfoldError)


def test_public_callables_have_docstrings():
    for name in memfold.__all__:
        obj = getattr(memfold, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert (obj.__doc__ or "").strip(), f"{name} has no docstring"
