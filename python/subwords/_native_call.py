"""A tokenizer's ``encode`` as one native call (``_core.FaceCall``), kept apart from the file
formats so that our own models use it without importing them."""

from __future__ import annotations

import functools
import inspect
import weakref
from typing import Any, Callable

from . import _core
from .errors import StateError


def native_call(tok: Any, method: Callable[..., Any], make: Callable[[Callable[..., Any]], _core.FaceCall]) -> _core.FaceCall:
    """``method`` of ``tok`` as one native call (``_core.FaceCall``, made by ``make`` from the
    general path), for ``tok.__dict__``: a plain call (one ``str``) runs no Python frame; any
    other goes to ``method`` with the same arguments. ``help``, ``inspect.signature`` and
    ``inspect.isroutine`` answer as for the method. The general path holds ``tok`` through a
    weak reference: a bound method in the object's own ``__dict__`` would be a cycle, and a
    loaded tokenizer (tens of MB) then waited for the cyclic collector, which could free it in
    the middle of later calls."""
    ref = weakref.ref(tok)

    def general(*args: Any, **kwargs: Any) -> Any:
        live = ref()
        if live is None:
            raise StateError(f"the tokenizer of this {method.__name__} method was freed; keep a reference to the tokenizer")
        return method(live, *args, **kwargs)

    general.__signature__ = _unbound_signature(method)  # type: ignore[attr-defined]
    general.__name__ = method.__name__
    general.__qualname__ = method.__qualname__
    general.__doc__ = method.__doc__
    call = make(general)  # its __name__ and __qualname__ are general's
    call.__doc__ = method.__doc__
    return call


@functools.lru_cache(maxsize=None)
def _unbound_signature(method: Callable[..., Any]) -> inspect.Signature:
    """``method``'s signature without ``self`` (a bound method's)."""
    sig = inspect.signature(method)
    return sig.replace(parameters=list(sig.parameters.values())[1:])


__all__ = ["native_call"]
