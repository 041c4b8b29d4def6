"""parse_json_object: the JSON object hidden in what a model actually says."""

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vera.providers._jsonparse import (
    IncompleteJSONError,
    MalformedJSONError,
    parse_json_object,
    try_parse_json_object,
)

WHITEBOX = "the providers' own clients, retries, cache and batches"

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)
json_objects = st.dictionaries(st.text(), json_values, max_size=6)
# A "{" in the prose could itself open a JSON object; anything else a model might say is fair.
prose = st.text(alphabet=st.characters(blacklist_characters="{"), max_size=40)


def fence(body: str) -> str:
    return f"```json\n{body}\n```"


@pytest.mark.slow
@given(d=json_objects, before=prose, after=prose)
def test_fenced_object_in_prose_round_trips(d: dict[str, Any], before: str, after: str) -> None:
    assert parse_json_object(before + fence(json.dumps(d)) + after) == d


@pytest.mark.slow
@given(d=json_objects, before=prose, after=prose)
def test_bare_object_in_prose_round_trips(d: dict[str, Any], before: str, after: str) -> None:
    assert parse_json_object(before + json.dumps(d) + after) == d


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  \n{"a": 1}\n', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('Here is the result: {"a": {"b": [1, 2]}} Hope this helps', {"a": {"b": [1, 2]}}),
        ('Sure {not json} then {"a": "}"} done', {"a": "}"}),
        ('{"a": 1} and also {"b": 2}', {"a": 1}),
    ],
)
def test_finds_the_object(text: str, expected: dict[str, Any]) -> None:
    assert parse_json_object(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "no json here", "{oops}", "a stray { brace"])
def test_no_object_is_an_error(text: str) -> None:
    with pytest.raises(MalformedJSONError, match="no JSON object"):
        parse_json_object(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1',
        # A cut-off list whose first item is complete: that item must not be taken for the reply.
        '{"claims": [{"number": 1, "text": "A."}, {"number": 2, "text": "Par',
        '```json\n{"claims": [{"number": 1, "text": "A."}, {"num',
        'Here: {"a": "a brace } inside a string',
    ],
)
def test_a_reply_that_ends_inside_its_object_is_incomplete(text: str) -> None:
    with pytest.raises(IncompleteJSONError, match=r"not complete JSON.*cut off"):
        parse_json_object(text)
    assert try_parse_json_object(text) is None


def test_a_json_list_is_not_an_object() -> None:
    with pytest.raises(MalformedJSONError, match="got a JSON list"):
        parse_json_object('[{"a": 1}, {"b": 2}]')


def test_malformed_is_a_value_error_and_quotes_the_reply() -> None:
    with pytest.raises(ValueError, match="I cannot help"):
        parse_json_object("I cannot help with that.")


def test_try_parse_returns_none_instead_of_raising() -> None:
    assert try_parse_json_object("nothing") is None
    assert try_parse_json_object('ok {"a": 1}') == {"a": 1}
