"""Base class of resource objects: every key of a response dict becomes an attribute."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import requests

from .errors import CairnError

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
            if key == "rag" or key.startswith("_"):
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


# ---------------------------------------------------------------------- helpers shared by the modules
def check(res: requests.Response) -> dict[str, Any]:
    """The parsed success envelope of a response; raises CairnError for an error envelope or a non-JSON reply."""
    try:
        body = res.json()
    except ValueError:
        text = (res.text or "").strip()
        raise CairnError(f"HTTP {res.status_code}: {text[:300] or res.reason or 'no body'}", code=res.status_code,
                         status=res.status_code) from None
    if not isinstance(body, dict):
        if res.status_code >= 400:
            raise CairnError(f"HTTP {res.status_code}: {body!r}", code=res.status_code, status=res.status_code)
        return {"code": 0, "data": body}
    code = body.get("code")
    if code is None and res.status_code < 400:
        return body
    if code != 0:
        raise error_from(body, res.status_code)
    return body


def error_from(body: dict[str, Any], status: int | None = None) -> CairnError:
    code = body.get("code")
    if not isinstance(code, int):
        code = status
    message = body.get("message")
    if not isinstance(message, str) or not message:
        message = str(message) if message not in (None, "") else "Error"
    return CairnError(message, code=code, data=body.get("data"), status=status)


def query(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """Query parameters: None dropped, booleans as true/false, lists repeated."""
    if params is None:
        return None
    out: dict[str, Any] = {}
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            value = ["true" if v is True else "false" if v is False else v for v in value]
        out[key] = value
    return out


def drop_none(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def plain(value: Any) -> Any:
    """Resource objects (e.g. DataSet.ParserConfig) become plain dicts for JSON."""
    if isinstance(value, Base):
        return value.to_json()
    return value


def items_of(data: Any, *keys: str) -> list:
    """The list inside ``data``: data itself when it is a list, else the first of ``keys`` present."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in keys:
            if isinstance(data.get(key), list):
                return data[key]
    return []
