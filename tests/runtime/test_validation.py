import pytest
from hypothesis import given
from hypothesis import strategies as st

from utp.validation import SchemaDefinitionError, coerce_value, compile_schema, validate_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "options": {"type": "object"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "label": {"type": "string"},
        "maybe": {"type": ["integer", "null"]},
        "nested": {"type": "object", "properties": {"depth": {"type": "integer"}}},
    },
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "field, given_value, expected",
    [
        ("count", "3", 3),
        ("count", " -12 ", -12),
        ("ratio", "2.5", 2.5),
        ("ratio", "3", 3),
        ("ratio", "1e3", 1000.0),
        ("flag", "true", True),
        ("flag", "FALSE", False),
        ("options", '{"a": 1}', {"a": 1}),
        ("tags", '["x", "y"]', ["x", "y"]),
        ("tags", "solo", ["solo"]),
        ("ids", "7", [7]),
        ("label", 5, "5"),
        ("label", 2.5, "2.5"),
        ("maybe", "4", 4),
    ],
)
def test_safe_coercions_are_applied_and_recorded(field, given_value, expected):
    outcome = validate_arguments(SCHEMA, {field: given_value})
    assert outcome.ok, outcome.errors
    assert outcome.arguments[field] == expected
    assert type(outcome.arguments[field]) is type(expected)
    assert outcome.coercions and outcome.coercions[0].startswith(field)


def test_nested_values_are_coerced_at_their_path():
    outcome = validate_arguments(SCHEMA, {"nested": {"depth": "2"}})
    assert outcome.arguments == {"nested": {"depth": 2}}
    assert outcome.coercions == ['nested.depth: "2" -> 2 (string to integer)']


@pytest.mark.parametrize(
    "field, value",
    [("count", "3.7"), ("count", "three"), ("count", 3.5), ("ratio", "nan"), ("ratio", "inf"), ("flag", "yes"),
     ("flag", 1), ("options", "[1]"), ("label", True), ("count", True)],
)
def test_lossy_or_guessing_coercions_are_never_made(field, value):
    outcome = validate_arguments(SCHEMA, {field: value})
    assert not outcome.ok
    assert outcome.arguments[field] == value
    assert outcome.errors[0].startswith(field)


def test_all_errors_are_reported_with_field_paths():
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "maximum": 7}},
              "required": ["city"], "additionalProperties": False}
    outcome = validate_arguments(schema, {"days": 9, "country": "JP"})
    assert len(outcome.errors) == 3
    joined = outcome.summary()
    assert "'city' is a required property" in joined
    assert "days: 9 is greater than the maximum of 7" in joined
    assert "'country' was unexpected" in joined


def test_coercions_are_kept_even_when_validation_fails():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}, "required": ["s"]}
    outcome = validate_arguments(schema, {"n": "3"})
    assert not outcome.ok
    assert outcome.arguments["n"] == 3
    assert outcome.coercions == ['n: "3" -> 3 (string to integer)']


def test_input_is_not_mutated():
    arguments = {"count": "3", "nested": {"depth": "1"}}
    validate_arguments(SCHEMA, arguments)
    assert arguments == {"count": "3", "nested": {"depth": "1"}}


def test_non_object_arguments_are_an_error_not_a_crash():
    outcome = validate_arguments(SCHEMA, ["a"])
    assert outcome.errors == ["arguments must be a JSON object, got array"]


def test_long_values_are_cut_in_messages():
    outcome = validate_arguments({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": "x" * 5000})
    assert len(outcome.errors[0]) < 300


def test_invalid_schema_is_a_definition_error():
    with pytest.raises(SchemaDefinitionError, match="tool 'x'.*properties"):
        compile_schema({"type": "object", "properties": {"a": {"type": "strin"}}}, where="tool 'x'")


def test_a_remembered_schema_verdict_is_given_again_and_names_the_new_place():
    bad = {"type": "object", "properties": {"a": {"type": "strin"}}}
    for where in ("tool 'x'", "tool 'y'"):
        with pytest.raises(SchemaDefinitionError, match=f"^{where} parameters: .*properties/a/type"):
            compile_schema(bad, where=f"{where} parameters")
    compile_schema({"type": "object", "properties": {"a": {"type": "string"}}})


def test_a_schema_json_cannot_give_back_is_judged_as_itself_not_as_its_json_twin():
    """A tuple is no JSON array to the meta-schema; its list twin, checked first, must not vouch for it."""
    compile_schema({"type": "object", "required": ["a"]})
    with pytest.raises(SchemaDefinitionError, match="required"):
        compile_schema({"type": "object", "required": ("a",)})


def test_ref_targets_are_coerced():
    schema = {"type": "object", "$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}
    assert validate_arguments(schema, {"a": "5"}).arguments == {"a": 5}


@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()))
def test_no_fraction_ever_becomes_an_integer(value):
    outcome = validate_arguments({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": repr(value)})
    assert not outcome.ok
    assert outcome.arguments["n"] == repr(value)


@given(st.integers())
def test_integer_text_round_trips(value):
    outcome = validate_arguments({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": str(value)})
    assert outcome.arguments["n"] == value


@given(st.integers(min_value=4000, max_value=6000), st.sampled_from(["integer", "number", "string", "boolean"]),
       st.booleans(), st.booleans())
def test_numbers_of_any_length_never_raise(digits, schema_type, as_text, negative):
    """Past Python's 4,300-digit int/str limit a number is reported by its length, never raised on."""
    value = -(10 ** (digits - 1)) if negative else 10 ** (digits - 1)
    given_value = ("-" if negative else "") + "1" + "0" * (digits - 1) if as_text else value
    outcome = validate_arguments({"type": "object", "properties": {"n": {"type": schema_type}}}, {"n": given_value})
    if schema_type in ("integer", "number"):
        assert outcome.ok == (digits <= 4300)
        if outcome.ok:
            assert outcome.arguments["n"] == value
    assert all(len(error) < 300 for error in outcome.errors)


def test_coerce_value_tries_wanted_types_in_order():
    assert coerce_value("5", ["integer", "string"]) == (5, "integer")
    assert coerce_value("x", ["boolean", "array"]) == (["x"], "array")
