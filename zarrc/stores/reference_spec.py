"""kerchunk reference sets in JSON (versions 0 and 1) -> one flat table of entries.

An entry is what a key of a reference set holds: ``bytes`` (inline data: text as
UTF-8, ``base64:`` text decoded, a JSON object serialised back to JSON) or a
``Ref`` (a target URL and, unless the reference is to the whole file, the offset
and length of the bytes in it).

Version 1's ``{{...}}`` templates are rendered here without jinja2: an expression
between the braces may be a name (a template or a ``gen`` dimension), an int, float
or string literal, ``+ - * / // %`` and parentheses over them, or a call of a
template with keyword arguments (``{{f(c='text')}}``), which is what the spec's
examples use.  Anything else (jinja filters, attribute access) is a MetadataError
naming the expression.
"""

from __future__ import annotations

import ast
import base64
import binascii
import itertools
import json
import operator
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from zarrc.errors import MetadataError


class Ref(NamedTuple):
    """A reference to bytes of a target file: ``url`` (None: the store's default
    target), ``offset`` and ``length`` (both None: the whole file)."""

    url: str | None
    offset: int | None = None
    length: int | None = None


_BRACES = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}
_MAX_TEXT = 1 << 16  # longest string a template expression may build (no "x" * 10**12)


class Template:
    """A string with ``{{expression}}`` parts, compiled once and rendered per use."""

    def __init__(self, text: str, where: str) -> None:
        self.text = text
        self.where = where
        self.parts: list[str | Callable[[Mapping[str, Any]], Any]] = []
        pos = 0
        for m in _BRACES.finditer(text):
            if m.start() > pos:
                self.parts.append(text[pos:m.start()])
            self.parts.append(_compile_expression(m.group(1), f"{where}: template {text!r}"))
            pos = m.end()
        if pos < len(text):
            self.parts.append(text[pos:])

    def render(self, env: Mapping[str, Any]) -> str:
        """The text with each expression replaced by its value (``str`` of it).
        Raises MetadataError for an unknown name or an operation the values refuse."""
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            value = part(env)
            if isinstance(value, Template):
                value = value.render(env)
            out.append(value if isinstance(value, str) else str(value))
        return "".join(out)


def _fail(where: str, what: str) -> MetadataError:
    return MetadataError(f"{where}: {what}")


def _compile_expression(source: str, where: str) -> Callable[[Mapping[str, Any]], Any]:
    """A function of the variables computing the expression ``source``.  Raises
    MetadataError naming ``where`` for syntax this renderer does not take."""
    try:
        tree = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        raise _fail(where, f"cannot parse {{{{{source}}}}}") from None

    def build(node: ast.AST) -> Callable[[Mapping[str, Any]], Any]:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float, str):
            value = node.value
            return lambda env: value
        if isinstance(node, ast.Name):
            name = node.id

            def lookup(env: Mapping[str, Any]) -> Any:
                try:
                    return env[name]
                except KeyError:
                    raise _fail(where, f"unknown name {name!r}") from None
            return lookup
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = build(node.operand)
            sign = -1 if isinstance(node.op, ast.USub) else 1
            return lambda env: sign * _number(inner(env), where)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            op, left, right = _OPS[type(node.op)], build(node.left), build(node.right)

            def binary(env: Mapping[str, Any]) -> Any:
                a, b = left(env), right(env)
                if isinstance(a, str) and isinstance(b, str) and op is operator.add:
                    if len(a) + len(b) > _MAX_TEXT:
                        raise _fail(where, "string too long")
                    return a + b
                try:
                    return op(_number(a, where), _number(b, where))
                except ZeroDivisionError:
                    raise _fail(where, f"division by zero in {{{{{source}}}}}") from None
            return binary
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
            name = node.func.id
            kwargs = [(k.arg, build(k.value)) for k in node.keywords if k.arg is not None]
            if len(kwargs) != len(node.keywords):
                raise _fail(where, f"unsupported call in {{{{{source}}}}}")

            def call(env: Mapping[str, Any]) -> Any:
                template = env.get(name)
                if template is None:
                    raise _fail(where, f"unknown template {name!r}")
                if not isinstance(template, Template):
                    return template
                return template.render({**env, **{k: f(env) for k, f in kwargs}})
            return call
        raise _fail(where, f"unsupported expression {{{{{source}}}}} (names, literals, + - * / // %, "
                           "parentheses and template calls only)")

    return build(tree)


def _number(value: Any, where: str) -> int | float:
    if type(value) in (int, float):
        return value
    raise _fail(where, f"arithmetic on {value!r}, which is not a number")


def inline_bytes(value: Any, key: str, where: str) -> bytes:
    """The bytes of an inline value: a str (``base64:`` prefix decoded, else UTF-8)
    or a JSON object / array (serialised).  Raises MetadataError for others."""
    if isinstance(value, str):
        if value.startswith("base64:"):
            try:
                return base64.b64decode(value[7:], validate=True)
            except (binascii.Error, ValueError):
                raise _fail(where, f"key {key!r}: invalid base64 data") from None
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, dict):
        return json.dumps(value).encode()
    raise _fail(where, f"key {key!r}: a value must be a string, an object or a list, not {value!r:.60}")


def _int(value: Any, key: str, what: str, where: str) -> int:
    if isinstance(value, str):  # (a rendered template)
        try:
            value = int(value.strip())
        except ValueError:
            pass
    if type(value) is not int or value < 0:
        raise _fail(where, f"key {key!r}: {what} must be a non-negative integer, not {value!r:.60}")
    return value


def reference(value: list, key: str, where: str, url_of: Callable[[str], str] | None = None) -> Ref:
    """The Ref of a list value ``[url]`` or ``[url, offset, length]`` (``url_of``
    renders templates in the URL).  Raises MetadataError for other lists."""
    if len(value) not in (1, 3):
        raise _fail(where, f"key {key!r}: a reference is [url] or [url, offset, length], not {value!r:.80}")
    url = value[0]
    if url is not None and not isinstance(url, str):
        raise _fail(where, f"key {key!r}: the URL must be a string, not {url!r:.60}")
    if url is not None and url_of is not None and "{{" in url:
        url = url_of(url)
    if len(value) == 1:
        return Ref(url)
    return Ref(url, _int(value[1], key, "the offset", where), _int(value[2], key, "the length", where))


def entry(value: Any, key: str, where: str, url_of: Callable[[str], str] | None = None) -> Any:
    """The entry (bytes or Ref) of one reference value.  Raises MetadataError."""
    if isinstance(value, list):
        return reference(value, key, where, url_of)
    return inline_bytes(value, key, where)


class ReferenceSet:
    """A reference set (a parsed JSON document of version 0 or 1) whose values are
    turned into entries one key at a time: ``refs`` holds the JSON values as they
    are, ``entry(key)`` the entry of one (templates rendered, ``overrides``
    replacing templates of the same name), ``generated()`` the references of each
    ``gen`` entry in turn.  ``where`` names the document in errors.  Raises
    MetadataError for a document that is not a reference set (not an object,
    unknown version, malformed members)."""

    def __init__(self, doc: Any, where: str, overrides: Mapping[str, str] | None = None) -> None:
        self.where = where
        if not isinstance(doc, dict):
            raise _fail(where, f"a reference set is a JSON object, not {type(doc).__name__}")
        self.env: dict[str, Any] = {}
        self.gens: list = []
        self._urls: dict[str, str] = {}
        self._templated = "version" in doc     # (version 0 has no templates)
        if "version" not in doc:
            self.refs: dict[str, Any] = doc
            return
        if doc["version"] != 1:
            raise _fail(where, f"unknown reference spec version {doc['version']!r} (0 and 1 are known)")
        unknown = set(doc) - {"version", "templates", "gen", "refs"}
        if unknown:
            raise _fail(where, f"unknown members {sorted(unknown)} of a version 1 reference set")
        templates = doc.get("templates") or {}
        if not isinstance(templates, dict) or not all(isinstance(v, str) for v in templates.values()):
            raise _fail(where, '"templates" must be an object of strings')
        templates = {**templates, **(overrides or {})}
        self.env = {name: Template(text, f"{where}: template {name!r}") if "{{" in text else text
                    for name, text in templates.items()}
        refs = doc.get("refs") or {}
        if not isinstance(refs, dict):
            raise _fail(where, '"refs" must be an object')
        self.refs = refs
        gens = doc.get("gen") or []
        if not isinstance(gens, list):
            raise _fail(where, '"gen" must be a list')
        self.gens = gens

    def _url_of(self, url: str) -> str:
        out = self._urls.get(url)
        if out is None:
            out = self._urls[url] = Template(url, self.where).render(self.env)
        return out

    def entry(self, key: str) -> bytes | Ref:
        """The entry of ``refs[key]``.  Raises MetadataError for a bad value."""
        return entry(self.refs[key], key, self.where, self._url_of if self._templated else None)

    def generated(self) -> Iterator[dict[str, Ref]]:
        """The references of each ``gen`` entry, one entry's at a time."""
        for i, gen in enumerate(self.gens):
            yield expand_gen(gen, self.env, f"{self.where}: gen[{i}]")


def parse_references(doc: Any, where: str, overrides: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The entries of a reference set (a parsed JSON document of version 0 or 1),
    as {key: bytes | Ref}, templates rendered (``overrides`` replacing templates of
    the same name) and ``gen`` expanded.  ``where`` names the document in errors.  Raises MetadataError for a document that is
    not a reference set (not an object, unknown version, bad values)."""
    refs = ReferenceSet(doc, where, overrides)
    out = {key: refs.entry(key) for key in refs.refs}
    for generated in refs.generated():
        out.update(generated)
    return out


def _dimension(name: str, spec: Any, where: str) -> Any:
    """The values of one ``gen`` dimension: a list of ints, or range(start, stop, step)."""
    if isinstance(spec, list):
        return spec
    if isinstance(spec, dict) and "stop" in spec:
        args = [spec.get("start", 0), spec["stop"], spec.get("step", 1)]
        if all(type(a) is int for a in args) and args[2] != 0:
            return range(*args)
    raise _fail(where, f"dimension {name!r} must be a list or {{\"start\", \"stop\", \"step\"}} of "
                       f"integers (step not 0), not {spec!r:.80}")


def expand_gen(gen: Any, env: Mapping[str, Any], where: str) -> dict[str, Ref]:
    """The references one ``gen`` entry generates: the cartesian product of its
    dimensions (the last varying fastest), each rendering ``key``, ``url`` and, if
    given, ``offset`` and ``length``.  Raises MetadataError for a malformed entry."""
    if not isinstance(gen, dict) or not isinstance(gen.get("key"), str) or not isinstance(gen.get("url"), str):
        raise _fail(where, 'a gen entry needs "key" and "url" strings')
    if ("offset" in gen) != ("length" in gen):
        raise _fail(where, 'a gen entry has both "offset" and "length" or neither')
    dims = gen.get("dimensions")
    if not isinstance(dims, dict) or not dims:
        raise _fail(where, '"dimensions" must be an object of one or more dimensions')
    names = list(dims)
    values = [_dimension(name, dims[name], where) for name in names]
    key_t, url_t = Template(gen["key"], where), Template(gen["url"], where)
    ranged = "offset" in gen
    offset_t = Template(str(gen["offset"]), where) if ranged else None
    length_t = Template(str(gen["length"]), where) if ranged else None
    out: dict[str, Ref] = {}
    local = dict(env)
    for combo in itertools.product(*values):
        local.update(zip(names, combo))
        key = key_t.render(local)
        url = url_t.render(local)
        if offset_t is None or length_t is None:
            out[key] = Ref(url)
        else:
            out[key] = Ref(url, _int(offset_t.render(local), key, "the offset", where),
                           _int(length_t.render(local), key, "the length", where))
    return out
