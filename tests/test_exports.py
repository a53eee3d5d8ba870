"""The public surface: __all__ is sorted, complete for the error tree, and every name resolves."""

import inspect

import memfold
from memfold.memory import errors


def test_all_is_sorted_and_resolves():
    assert memfold.__all__ == sorted(memfold.__all__)
    for name in memfold.__all__:
        assert hasattr(memfold, name), name


def test_every_error_is_exported_and_derives_from_memfold_error():
    error_classes = [obj for _, obj in inspect.getmembers(errors, inspect.isclass) if issubclass(obj, Exception)
                     and obj.__module__ == errors.__name__]
    for cls in error_classes:
        assert issubclass(cls, memfold.MemfoldError)
        assert cls.__name__ in memfold.__all__, f"{cls.__name__} is not exported"


def test_public_callables_have_docstrings():
    for name in memfold.__all__:
        obj = getattr(memfold, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert (obj.__doc__ or "").strip(), f"{name} has no docstring"
