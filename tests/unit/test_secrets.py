"""`redact`: the one function that takes keys out of every stored, reported or printed text."""

import pytest

from vera import SampleResult, SampleStatus
from vera._types import RunStop, is_redacted, redact
from vera.providers import ProviderConnectionError

WHITEBOX = "the report's parts and the secret guards"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://user:KEY@host/v1", "http://***@host/v1"),
        ("https://KEY@host:8443/v1/x", "https://***@host:8443/v1/x"),
        ("http://h/v1?api-key=KEY&x=1", "http://h/v1?api-key=***&x=1"),
        ("http://h/v1?token=KEY#top", "http://h/v1?token=***#top"),
        ("http://h/v1?Key=KEY&sig=KEY", "http://h/v1?Key=***&sig=***"),
        ("could not reach http://u:KEY@h/v1: refused", "could not reach http://***@h/v1: refused"),
        ("key sk-proj-abcdefghijklmnopqrstuvwx rejected", "key *** rejected"),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz", "Authorization: Bearer ***"),
    ],
)
def test_secrets_are_taken_out(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert "KEY" not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "http://localhost:8000/v1",
        "https://example.com/page?id=4&lang=en",
        "Paris is the capital of France. Email me@example.com",
        "",
    ],
)
def test_text_without_secrets_is_unchanged(text: str) -> None:
    assert redact(text) == text
    assert not is_redacted(redact(text))


def test_messages_that_reach_reports_and_errors_are_redacted() -> None:
    url = "http://me:KEY@127.0.0.1:9/v1"
    error = ProviderConnectionError(f"could not reach {url}: refused")
    assert "KEY" not in str(error)
    result = SampleResult(id="s", status=SampleStatus.ERROR, error=str(ValueError(url)))
    assert result.error == "http://***@127.0.0.1:9/v1"
    assert "KEY" not in RunStop(reason=f"stopped at {url}", planned=False).reason
