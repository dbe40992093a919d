"""Check a call's arguments against its tool's JSON Schema, fixing only what cannot change meaning.

Small models write ``{"count": "3"}`` for an integer or ``{"tags": "a"}`` for
an array far more often than they write something actually wrong. Refusing
those calls wastes a round; silently accepting anything hides real mistakes.
So a fixed set of *lossless* coercions is tried, each one recorded so reports
can count them, and everything else is reported with the field that is wrong.

Coercions are driven by the validator's own ``type`` errors, so they reach
nested objects, array items and ``$ref`` targets exactly where the schema
says a different type belongs. A coercion is only kept if it produces a value
of a type the schema asked for; ``"3.7"`` never becomes ``3``.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError

from utp.numbers import digit_limit, read_integer, read_number, spell_huge_ints, too_long_digits
from utp.types import json_type_name

#: at most this many errors are spelled out; the rest are counted
MAX_REPORTED_ERRORS = 10
#: a schema message quoting a huge argument is cut to this many characters
MAX_MESSAGE_CHARS = 200
#: coercions can enable further ones (wrap in a list, then convert the item); bounded
_MAX_PASSES = 8


class SchemaDefinitionError(ValueError):
    """A tool's parameter schema is not valid JSON Schema (a definition bug, not a model error)."""


@dataclass
class ValidationOutcome:
    """Arguments after coercion, what was coerced, and what is still wrong."""

    arguments: dict[str, Any]
    coercions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        """All errors in one line-per-error message a model can act on."""
        shown = self.errors[:MAX_REPORTED_ERRORS]
        text = "; ".join(shown)
        hidden = len(self.errors) - len(shown)
        return f"{text}; and {hidden} more" if hidden > 0 else text


def compile_schema(schema: Mapping[str, Any], where: str = "parameters") -> Draft202012Validator:
    """A validator for ``schema``; raises :class:`SchemaDefinitionError` naming ``where``."""
    problem = _schema_problem_of(schema)
    if problem is not None:
        raise SchemaDefinitionError(f"{where}: invalid JSON Schema at {problem}")
    return Draft202012Validator(schema)


def _schema_problem_of(schema: Mapping[str, Any]) -> str | None:
    """Where and how ``schema`` breaks the meta-schema, or None.

    Checking against the meta-schema costs far more than validating arguments, and an agent
    or an evaluation registers the same few schemas again for every conversation, so the
    verdict is remembered by the schema's canonical JSON text. A schema that text does not
    give back exactly (a tuple, a non-string key) is checked each time: the meta-schema may
    judge it differently from its JSON twin.
    """
    try:
        key = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return _meta_schema_problem(schema)
    if json.loads(key) != schema:
        return _meta_schema_problem(schema)
    return _remembered_meta_schema_problem(key)


@functools.lru_cache(maxsize=4096)
def _remembered_meta_schema_problem(schema_json: str) -> str | None:
    return _meta_schema_problem(json.loads(schema_json))


def _meta_schema_problem(schema: Any) -> str | None:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        location = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"{location}: {exc.message}"
    return None


def validate_arguments(
    schema_or_validator: Mapping[str, Any] | Draft202012Validator, arguments: Any
) -> ValidationOutcome:
    """Coerce safely, then validate; never raises for bad *arguments*."""
    validator = (
        schema_or_validator
        if isinstance(schema_or_validator, Draft202012Validator)
        else compile_schema(schema_or_validator)
    )
    if not isinstance(arguments, Mapping):
        return ValidationOutcome(
            arguments={}, errors=[f"arguments must be a JSON object, got {json_type_name(arguments)}"]
        )
    # an int too long to print would raise in the validator's messages: as its digits, a
    # number-typed position reports it by its length (_too_long_message)
    args: dict[str, Any] = spell_huge_ints(copy.deepcopy(dict(arguments)))
    coercions: list[str] = []
    for _ in range(_MAX_PASSES):
        changed = False
        touched: set[tuple[Any, ...]] = set()
        for error in list(validator.iter_errors(args)):
            key = tuple(error.absolute_path)
            if error.validator != "type" or not key or key in touched:
                continue
            touched.add(key)
            wanted = _as_list(error.validator_value)
            converted = coerce_value(error.instance, wanted)
            if converted is _NO_COERCION:
                continue
            new_value, target = converted
            path = list(error.absolute_path)
            if _set_at(args, path, new_value):
                coercions.append(
                    f"{format_path(path)}: {_short(error.instance)} -> {_short(new_value)} "
                    f"({json_type_name(error.instance)} to {target})"
                )
                changed = True
        if not changed:
            break
    errors = _describe_errors(validator.iter_errors(args))
    return ValidationOutcome(arguments=args, coercions=coercions, errors=errors)


# --------------------------------------------------------------------------- coercions

_NO_COERCION: Any = object()


def _to_integer(value: Any) -> Any:
    number = read_integer(value) if isinstance(value, str) else None
    return _NO_COERCION if number is None else number


def _to_number(value: Any) -> Any:
    number = read_number(value) if isinstance(value, str) else None
    return _NO_COERCION if number is None else number


def _to_boolean(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered == "true":
            return True
        if lowered == "false":
            return False
    return _NO_COERCION


def _to_string(value: Any) -> Any:
    # bool is an int subclass but "True" is not what the model meant by a string
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and not math.isfinite(value):
            return _NO_COERCION
        return json.dumps(value)
    return _NO_COERCION


def _json_text_of(kind: type) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        if isinstance(value, str):
            try:
                parsed = json.loads(value)
            except ValueError:
                return _NO_COERCION
            if isinstance(parsed, kind):
                return parsed
        return _NO_COERCION

    return convert


_object_from_text = _json_text_of(dict)
_array_from_text = _json_text_of(list)


def _to_object(value: Any) -> Any:
    return _object_from_text(value)


def _to_array(value: Any) -> Any:
    parsed = _array_from_text(value)
    if parsed is not _NO_COERCION:
        return parsed
    if isinstance(value, list):
        return _NO_COERCION
    return [value]  # a single value where a list belongs: the list of that value


#: target JSON type → lossless conversion into it (registry, not an if-chain)
COERCIONS: dict[str, Callable[[Any], Any]] = {
    "integer": _to_integer,
    "number": _to_number,
    "boolean": _to_boolean,
    "string": _to_string,
    "object": _to_object,
    "array": _to_array,
}


def coerce_value(value: Any, wanted: Sequence[str]) -> Any:
    """``(new_value, target_type)`` for the first wanted type reachable losslessly, else a sentinel."""
    for target in wanted:
        convert = COERCIONS.get(target)
        if convert is None:
            continue
        new_value = convert(value)
        if new_value is not _NO_COERCION:
            return new_value, target
    return _NO_COERCION


# --------------------------------------------------------------------------- helpers


def _as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _set_at(container: Any, path: Sequence[Any], value: Any) -> bool:
    for key in path[:-1]:
        try:
            container = container[key]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        container[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        return False
    return True


def format_path(path: Iterable[Any], empty: str = "(arguments)") -> str:
    """``['items', 0, 'name']`` → ``items[0].name``; the empty path reads as ``empty``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or empty


def _too_long_message(error: ValidationError) -> str | None:
    """For a number written with more digits than Python reads: what is wrong, in words."""
    if error.validator != "type" or not isinstance(error.instance, str):
        return None
    if not {"integer", "number"} & set(_as_list(error.validator_value)):
        return None
    digits = too_long_digits(error.instance)
    return f"a number of {digits} digits is longer than the {digit_limit()} digits a number may have" if digits else None


def _describe_errors(errors: Any) -> list[str]:
    described: dict[str, None] = {}
    ordered: list[ValidationError] = sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.message))
    for error in ordered:
        message = _too_long_message(error) or error.message
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[: MAX_MESSAGE_CHARS - 3] + "..."
        described.setdefault(f"{format_path(list(error.absolute_path))}: {message}", None)
    return list(described)


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
