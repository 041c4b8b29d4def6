"""Data that would take over an output (issue 39, item 8): ANSI and OSC escape sequences in an
answer, a sample id or a metadata value never reach the terminal or a CI log, and a NUL or
another character XML 1.0 forbids never makes the JUnit file unreadable.

Each case is a real `vera eval` in a subprocess with the offline judge; what it printed is
read byte for byte, and the JUnit file is parsed with `xml.etree`.
"""

from __future__ import annotations

import json
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.cli import run_vera
from vera._text import printable
from vera.testing import assert_faithful

WHITEBOX = "the text utilities"

OSC = "\x1b]0;pwned\x07"
"""Sets the terminal's window title; the same shape writes hyperlinks or the clipboard."""
CSI = "\x1b[31m"
"""Turns the rest of the log red."""
SHOWN = "␛]0;pwned␇"
"""How the OSC sequence is printed instead: visible, and obeyed by no terminal."""
FACT = "The refund window is 30 days."


def _rows(where: str) -> list[dict[str, Any]]:
    """A supported sample and an unsupported one (so that it is listed as failing), with the
    hostile text in the failing sample's `where`."""
    hostile = OSC + CSI
    bad: dict[str, Any] = {
        "id": "s1",
        "question": "How long is the refund window?",
        "contexts": [FACT],
        "answer": "The refund window is 90 days.",
        "metadata": {"team": "red"},
    }
    if where == "answer":
        bad["answer"] = f"The refund window is 90 days{hostile}."
    elif where == "id":
        bad["id"] = f"s1{hostile}"
    else:
        bad["metadata"]["team"] = f"red{hostile}"
    good = {"id": "s2", "question": "How long?", "contexts": [FACT], "answer": FACT}
    return [bad, {**good, "metadata": {"team": "blue"}}]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


@pytest.mark.parametrize("where", ["answer", "id", "metadata"])
def test_escape_sequences_in_the_data_are_shown_not_obeyed(tmp_path: Path, where: str) -> None:
    _write(tmp_path / "d.jsonl", _rows(where))
    result = run_vera(
        tmp_path, "eval", "-d", "d.jsonl", "--group-by", "team", "--no-history", "--no-cache"
    )
    printed = result.stdout + result.stderr
    # s1's contradicted refund window makes its answer unfaithful: the answer gate fails.
    assert result.returncode == 1, printed
    assert "\x1b" not in printed and "\x07" not in printed, printed
    assert SHOWN in printed, printed  # the data is still there to read


def test_a_pipeline_error_that_quotes_the_question_is_shown_not_obeyed(tmp_path: Path) -> None:
    (tmp_path / "my_rag.py").write_text(
        "def answer(query):\n    raise RuntimeError('no answer for ' + query)\n"
    )
    _write(tmp_path / "d.jsonl", [{"id": "q1", "question": f"Refunds?{OSC}{CSI}"}])
    result = run_vera(
        tmp_path,
        "eval",
        "-d",
        "d.jsonl",
        "--pipeline",
        "my_rag:answer",
        "--no-history",
        "--no-cache",
        PYTHONPATH=str(tmp_path),
    )
    printed = result.stdout + result.stderr
    assert "no answer for Refunds?" in result.stderr, printed
    assert "\x1b" not in printed and "\x07" not in printed, printed
    assert SHOWN in printed, printed


def test_characters_xml_forbids_leave_the_junit_file_well_formed(tmp_path: Path) -> None:
    forbidden = "\x00\x01\x0b\x0c\x1b[31m\ufffe"
    rows = _rows("answer")
    rows[0]["id"] = f"s1{forbidden}"
    rows[0]["answer"] = f"The refund window is 90 days{forbidden}."
    rows[1]["metadata"]["team"] = f"blue{forbidden}"
    _write(tmp_path / "d.jsonl", rows)
    result = run_vera(
        tmp_path, "eval", "-d", "d.jsonl", "--no-history", "--no-cache", "--junit", "j.xml"
    )
    assert result.returncode == 1, result.stderr  # s1's contradicted claim: unfaithful
    root = ET.parse(tmp_path / "j.xml").getroot()  # was: not well-formed (invalid token)
    names = {case.get("name") for case in root.iter("testcase")}
    assert names == {"s1␀␁␋␌␛[31m\ufffd", "s2"}
    # The claims quote the answer (split into two at the vertical tab and the form feed).
    claims = "".join(failure.text or "" for failure in root.iter("failure"))
    assert "90 days␀␁" in claims and "␛[31m\ufffd" in claims, claims


@given(st.text())
def test_printable_text_holds_no_control_character_but_tab_and_newline(text: str) -> None:
    shown = printable(text)
    assert len(shown) == len(text)  # one for one: styled spans over the text keep their places
    for original, printed in zip(text, shown, strict=True):
        if unicodedata.category(printed) in ("Cc", "Cs") or printed in "\ufffe\uffff":
            assert printed in "\t\n"
        elif printed != original:
            assert unicodedata.category(original) in ("Cc", "Cs") or original in "\ufffe\uffff"


def test_an_assertion_that_quotes_the_answer_shows_its_escape_sequences() -> None:
    # pytest prints the message into the terminal or the CI log.
    with pytest.raises(AssertionError) as failed:
        assert_faithful(f"The refund window is 90 days.{OSC}{CSI}", [FACT])
    message = str(failed.value)
    assert "\x1b" not in message and "\x07" not in message, message
    assert SHOWN in message, message
