"""The codec registry: v3 spec name -> codec class.

Each codec module registers its class when it is imported (``@register`` on the
class); ``zarrc.codecs`` imports every codec module, so the registry is complete
once the package is.  :func:`codec_from_spec` builds a codec object from a spec;
``chain.py`` and ``sharding.py`` both build their codecs through it, and neither
imports the other's module for that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from zarrc.codecs._base import Codec
from zarrc.errors import ArgumentError, ArgumentTypeError, MetadataError, UnknownCodecError
from zarrc.metadata.codecs import CodecSpec, register_kind

CODECS: dict[str, type[Codec]] = {}
# name prefix -> the class for a name with it and a category (None: the name's own);
# ``numcodecs.<id>`` names (zarrc.codecs.numcodecs_v3)
PREFIXES: dict[str, Callable[[str, str | None], type[Codec]]] = {}

C = TypeVar("C", bound=type[Codec])


def register(cls: C) -> C:
    """Register codec class ``cls`` under its ``name`` (a class decorator), and, for a
    v3 codec (``cls.in_v3``), as the spec parser's kind of that name
    (``zarrc.metadata.codecs.register_kind``: its category and ``parse_spec``);
    ArgumentError if another class has that name."""
    known = CODECS.get(cls.name)
    if known is not None and known is not cls:
        raise ArgumentError(f"codec name {cls.name!r} is taken by {known.__qualname__}")
    CODECS[cls.name] = cls
    if cls.in_v3:
        register_kind(cls)
    return cls


def register_prefix(prefix: str, classes: Callable[[str, str | None], type[Codec]]) -> None:
    """Names starting with ``prefix`` are built by the class ``classes(name, category)``."""
    PREFIXES[prefix] = classes


def codec_class(name: str, category: str | None = None) -> type[Codec]:
    """The class registered for ``name`` (for a prefixed name, in ``category``: None for
    the name's own); MetadataError if there is none."""
    cls = CODECS.get(name)
    if cls is None:
        for prefix, classes in PREFIXES.items():
            if name.startswith(prefix):
                return classes(name, category)
        raise UnknownCodecError(f"unknown codec {name!r}")
    return cls


def codec_from_spec(spec: Any) -> Codec:
    """A codec object from a codec object, a v3 spec dict (or an object with ``name``
    and ``configuration``), a CodecSpec or a name.

    A CodecSpec comes from ``zarrc.metadata.codecs.parse_codecs``, which has
    validated its configuration: it is built without checking it again
    (``Codec.from_spec``).  Dicts and names are checked by the codec's constructor.
    Raises MetadataError for an unknown name (one that is not a str too) or a
    configuration the codec does not take, ArgumentTypeError (a TypeError) for an
    object that is none of these."""
    if isinstance(spec, Codec):
        return spec
    if isinstance(spec, CodecSpec):
        return codec_class(spec.name, spec.role).from_spec(spec.configuration)
    name: object
    if isinstance(spec, str):
        name, conf = spec, {}
    elif isinstance(spec, Mapping):
        name, conf = spec.get("name"), spec.get("configuration", {})
    elif hasattr(spec, "name") and hasattr(spec, "configuration"):
        name, conf = spec.name, spec.configuration
    else:
        raise ArgumentTypeError(f"codec {spec!r} is not a codec object, a spec dict or a name")
    if not isinstance(name, str):     # (a list would fail the registry's lookup with a bare TypeError)
        raise UnknownCodecError(f"unknown codec {name!r}")
    cls = codec_class(name)
    try:
        return cls(**dict(conf))
    except TypeError as exc:
        raise MetadataError(f"codec {name!r}: bad configuration {dict(conf)!r} ({exc})") from None
