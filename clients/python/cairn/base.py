"""Base class of resource objects: every key of a response dict becomes an attribute."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from .client import Client


class Base:
    """A resource built from a response dict.

    Each key becomes an attribute; nested dicts become :class:`Base` objects (so
    ``dataset.parser_config.chunk_token_num`` works), lists are kept as they are. Keys a class does
    not know are kept too. Subclasses list spec defaults in ``_defaults``; a key that would shadow a
    method is kept only in ``to_json()``. Objects also read like dicts (``obj["key"]``, ``obj.get``)
    and compare equal to a dict with the same content.
    """

    _defaults: dict[str, Any] = {}

    def __init__(self, rag: "Client", res_dict: dict[str, Any] | None = None):
        self.rag = rag
        self._shadowed: dict[str, Any] = {}
        for key, value in self._defaults.items():
            self.__dict__[key] = _copy(value)
        self._update_from_dict(rag, res_dict or {})

    def _update_from_dict(self, rag: "Client", res_dict: dict[str, Any]) -> None:
        for key, value in res_dict.items():
            if not isinstance(key, str):
                continue
            value = Base(rag, value) if isinstance(value, dict) else value
            if key in ("rag", "_shadowed") or callable(getattr(type(self), key, None)):
                self._shadowed[key] = value
            else:
                self.__dict__[key] = value

    def to_json(self) -> dict[str, Any]:
        """The attributes as a plain dict (nested objects converted back)."""
        out: dict[str, Any] = {}
        items = list(self.__dict__.items()) + list(self._shadowed.items())
        for key, value in items:
            if key in ("rag", "_shadowed"):
                continue
            out[key] = value.to_json() if isinstance(value, Base) else value
        return out

    # Dict-style reading, for callers that treat nested objects as dicts.
    def __getitem__(self, key: str) -> Any:
        if key not in ("rag", "_shadowed"):
            if key in self.__dict__:
                return self.__dict__[key]
            if key in self._shadowed:
                return self._shadowed[key]
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return key in self.to_json()

    def keys(self) -> Iterator[str]:
        return iter(self.to_json().keys())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Base):
            return self.to_json() == other.to_json()
        if isinstance(other, dict):
            return self.to_json() == other
        return NotImplemented

    __hash__ = object.__hash__

    def __str__(self) -> str:
        return str(self.to_json())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_json()!r})"


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
