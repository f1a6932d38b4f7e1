"""A small JSON Schema validator for the subset docs/openapi.json uses (OpenAPI 3.1 = JSON Schema 2020-12).

Enough to check real API responses against the document without a new dependency: type, enum, const,
properties/required/additionalProperties, items/minItems, minProperties, minLength, minimum, pattern, anyOf,
oneOf, $ref to components, and the date-time and uri formats. Unknown keywords fail loudly, so the document can't
quietly use something this validator ignores.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

ANNOTATIONS = {"description", "example", "examples", "title", "default"}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def errors(value: Any, schema: dict, document: dict, where: str = "$") -> list[str]:
    """Every way `value` breaks `schema` ($refs resolved in `document`), as 'path: reason' strings."""
    found: list[str] = []
    for keyword, rule in schema.items():
        if keyword in ANNOTATIONS:
            continue
        check = _KEYWORDS.get(keyword)
        if check is None:
            raise ValueError(f"{where}: the test validator does not know the keyword {keyword!r}")
        found += check(value, rule, schema, document, where)
    return found


def _ref(value, rule, schema, document, where):
    target = document
    for part in rule.removeprefix("#/").split("/"):
        target = target[part]
    return errors(value, target, document, where)


def _type(value, rule, schema, document, where):
    allowed = rule if isinstance(rule, list) else [rule]
    return [] if any(TYPES[t](value) for t in allowed) else [f"{where}: {value!r} is not of type {rule}"]


def _properties(value, rule, schema, document, where):
    if not isinstance(value, dict):
        return []
    return [e for name, sub in rule.items() if name in value
            for e in errors(value[name], sub, document, f"{where}.{name}")]


def _required(value, rule, schema, document, where):
    return [f"{where}: missing {name!r}" for name in rule if isinstance(value, dict) and name not in value]


def _additional(value, rule, schema, document, where):
    if not isinstance(value, dict):
        return []
    extra = [k for k in value if k not in schema.get("properties", {})]
    if rule is False:
        return [f"{where}: unexpected {k!r}" for k in extra]
    return [e for k in extra for e in errors(value[k], rule, document, f"{where}.{k}")]


def _items(value, rule, schema, document, where):
    if not isinstance(value, list):
        return []
    return [e for i, item in enumerate(value) for e in errors(item, rule, document, f"{where}[{i}]")]


def _any_of(value, rule, schema, document, where):
    results = [errors(value, sub, document, where) for sub in rule]
    return [] if any(not r for r in results) else [f"{where}: matches none of anyOf: {results}"]


def _one_of(value, rule, schema, document, where):
    matches = sum(1 for sub in rule if not errors(value, sub, document, where))
    return [] if matches == 1 else [f"{where}: matches {matches} of oneOf, expected exactly 1"]


def _format(value, rule, schema, document, where):
    if not isinstance(value, str):
        return []
    if rule == "date-time":
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return [f"{where}: {value!r} is not a date-time"]
        return [] if parsed.tzinfo else [f"{where}: {value!r} has no offset"]
    if rule == "uri":
        parts = urlsplit(value)
        return [] if parts.scheme and parts.netloc else [f"{where}: {value!r} is not an absolute URI"]
    raise ValueError(f"{where}: the test validator does not know the format {rule!r}")


def _simple(test, message):
    def check(value, rule, schema, document, where):
        try:
            return [] if test(value, rule) else [f"{where}: {value!r} {message} {rule!r}"]
        except TypeError:
            return []

    return check


_KEYWORDS = {
    "$ref": _ref,
    "type": _type,
    "properties": _properties,
    "required": _required,
    "additionalProperties": _additional,
    "items": _items,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "format": _format,
    "enum": _simple(lambda v, r: v in r, "is not one of"),
    "const": _simple(lambda v, r: v == r, "is not"),
    "minItems": _simple(lambda v, r: not isinstance(v, list) or len(v) >= r, "has fewer items than"),
    "minProperties": _simple(lambda v, r: not isinstance(v, dict) or len(v) >= r, "has fewer properties than"),
    "minLength": _simple(lambda v, r: not isinstance(v, str) or len(v) >= r, "is shorter than"),
    "minimum": _simple(lambda v, r: not TYPES["number"](v) or v >= r, "is less than"),
    "pattern": _simple(lambda v, r: not isinstance(v, str) or re.search(r, v) is not None, "does not match"),
}
