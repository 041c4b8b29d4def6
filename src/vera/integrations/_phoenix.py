"""VERA's verdicts beside the traces in Arize Phoenix: span annotations on the span each answer
came from (`vera eval --phoenix URL`, `vera monitor --phoenix URL`).

An answer read from a trace (OTLP / OpenInference input: the sample's `root_span_id`, see
`vera.datasets._otlp`) gets, on that span, through the official client (`arize-phoenix-client`,
the `phoenix` extra, imported only here and only when asked for):

- `vera.verdict`: the answer verdict as label (faithful, unfaithful, no_claims, error), 1.0 or 0.0
  as score (None for an error), its reason as explanation, and its claims (text, verdict,
  evidence, reason) with the judge in metadata;
- `vera.<metric>`: each metric's score.

An answer without a span id (a dataset of rows, not of traces) is counted and named, never
dropped silently; a span Phoenix does not hold (its trace was never sent there) likewise. A
Phoenix that cannot be reached, or refuses the annotations, is a `ConfigError` naming the URL:
the caller has written its own reports first. The client's objects stay behind `Any`; its
errors are httpx's (a base dependency of VERA), imported only when Phoenix is called: the
pytest plugin imports this package in every test session.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from vera._types._errors import ConfigError
from vera._types._extras import install_hint
from vera._types._report import ClaimRecord, SampleResult
from vera._types._samples import Sample

if TYPE_CHECKING:
    import httpx

INSTALL_HINT = install_hint("phoenix")
SPAN_ID_KEY = "root_span_id"
"""The sample metadata key VERA's OTLP reader puts the answer's span id under."""
VERDICT_ANNOTATION = "vera.verdict"
_BATCH = 100
"""Annotations a request carries: Phoenix refuses a whole request for one unknown span, so a
refused batch is sent again one answer at a time."""
_SHOWN = 5
"""Sample ids a summary names before it only counts."""


def span_ids(samples: Iterable[Sample]) -> dict[str, str]:
    """Each sample's span id by sample id, for the samples that came from a trace."""
    found: dict[str, str] = {}
    for sample in samples:
        span = sample.metadata.get(SPAN_ID_KEY)
        if isinstance(span, str) and span:
            found[sample.id] = span
    return found


@dataclass
class PhoenixTally:
    """What one annotator sent: the answers annotated, and those it could not place."""

    annotated: int = 0
    annotations: int = 0
    without_span: list[str] = field(default_factory=list)
    """Sample ids that carry no span id (not read from a trace)."""
    unknown_span: list[str] = field(default_factory=list)
    """Sample ids whose span Phoenix does not hold (the trace was not sent there)."""

    def summary(self, url: str) -> str:
        """One line for the terminal: what went where, and what did not, with a few ids."""
        line = (
            f"{_answers(self.annotated)} annotated in Phoenix at {url} "
            f"({self.annotations} annotations)"
        )
        if self.without_span:
            line += (
                f"; {len(self.without_span)} without a span id, not annotated "
                f"({_ids(self.without_span)}): only answers read from traces carry one"
            )
        if self.unknown_span:
            line += (
                f"; {len(self.unknown_span)} whose span Phoenix does not hold "
                f"({_ids(self.unknown_span)}): send their traces to this Phoenix first"
            )
        return line


def _answers(count: int) -> str:
    return f"{count} answer" if count == 1 else f"{count} answers"


def _ids(ids: list[str]) -> str:
    more = f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""
    return ", ".join(ids[:_SHOWN]) + more


def _annotator_kind(judge: str | None) -> str:
    """Phoenix's annotator kinds: a model judge is LLM, the offline and NLI judges are CODE."""
    if judge is None:
        return "LLM"
    return "CODE" if judge.split(":", 1)[0] in {"offline", "nli", "fake"} else "LLM"


def _claim(claim: ClaimRecord) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "text": claim.text,
        "verdict": claim.verdict.value,
        "evidence": claim.evidence,
        "reason": claim.reason,
    }
    if claim.context_index is not None:
        entry["context_index"] = claim.context_index
    return entry


def annotations_for(
    result: SampleResult, span_id: str, *, judge: str | None = None
) -> list[dict[str, Any]]:
    """The annotations of one answer on its span, in the client's `SpanAnnotationData` shape."""
    kind = _annotator_kind(judge)
    metadata: dict[str, Any] = {
        "sample_id": result.id,
        "claims": [_claim(c) for c in result.claims],
    }
    if judge is not None:
        metadata["judge"] = judge
    found: list[dict[str, Any]] = []
    verdict = _verdict(result)
    if verdict is not None:
        found.append(
            {
                "span_id": span_id,
                "name": VERDICT_ANNOTATION,
                "annotator_kind": kind,
                "result": verdict,
                "metadata": metadata,
            }
        )
    for metric, score in result.scores.items():
        if score is not None:
            found.append(
                {
                    "span_id": span_id,
                    "name": f"vera.{metric}",
                    "annotator_kind": kind,
                    "result": {"score": float(score)},
                    "metadata": {"sample_id": result.id},
                }
            )
    return found


def _verdict(result: SampleResult) -> dict[str, Any] | None:
    """The answer verdict as an annotation result; an error without one says what failed."""
    if result.verdict is not None:
        passed = result.verdict.passed
        return {
            "label": result.verdict.status.value,
            "score": None if passed is None else float(passed),
            "explanation": result.verdict.reason,
        }
    if result.error is not None:
        return {"label": "error", "explanation": str(result.error)}
    return None


class PhoenixAnnotator:
    """Sends answers' verdicts to the Phoenix at `url` as span annotations.

        annotator = PhoenixAnnotator("http://127.0.0.1:6006", judge=report.judge)
        tally = annotator.send((result, ids.get(result.id)) for result in results)

    The client reads `PHOENIX_API_KEY` and `PHOENIX_CLIENT_HEADERS` for a Phoenix that asks
    for them. Thread-safe: `vera monitor` calls `annotate_sample` from worker threads, one
    request at a time.
    """

    def __init__(self, url: str, *, judge: str | None = None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.netloc:
            raise ConfigError(f"--phoenix {url!r}: expected Phoenix's http(s) URL")
        self.url = url.rstrip("/")
        self.judge = judge
        self.tally = PhoenixTally()
        self._client: Any = None
        self._lock = threading.Lock()

    def _phoenix(self) -> Any:
        if self._client is None:
            self._client = _client_module().Client(base_url=self.url)
        return self._client

    def check(self) -> None:
        """Phoenix answers at the URL and takes the key given (`ConfigError` if not): before
        a monitor starts, so a wrong URL is said at once rather than at the first trace."""
        import httpx

        try:
            self._phoenix().projects.list()
        except httpx.HTTPStatusError as exc:
            raise self._refused(exc) from None
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from None

    def send(self, answers: Iterable[tuple[SampleResult, str | None]]) -> PhoenixTally:
        """Annotate each (result, span id) pair; the running tally. Answers without a span id
        are counted in it, not sent."""
        with self._lock:
            return self._send(answers)

    def _send(self, answers: Iterable[tuple[SampleResult, str | None]]) -> PhoenixTally:
        batch: list[tuple[str, list[dict[str, Any]]]] = []
        for result, span_id in answers:
            if span_id is None:
                self.tally.without_span.append(result.id)
                continue
            found = annotations_for(result, span_id, judge=self.judge)
            if found:
                batch.append((result.id, found))
            if len(batch) >= _BATCH:
                self._post(batch)
                batch = []
        if batch:
            self._post(batch)
        return self.tally

    def annotate_sample(self, sample: Sample, result: SampleResult) -> None:
        """One evaluated sample (`vera monitor`'s `on_result`): its span from its metadata."""
        self.send([(result, span_ids([sample]).get(sample.id))])

    def _post(self, batch: list[tuple[str, list[dict[str, Any]]]]) -> None:
        import httpx

        try:
            self._log([a for _, found in batch for a in found])
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code != 404:
                raise self._refused(exc) from None
            if len(batch) == 1:
                self.tally.unknown_span.append(batch[0][0])
                return
            for one in batch:  # which spans Phoenix lacks: each answer on its own
                self._post([one])
            return
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from None
        self.tally.annotated += len(batch)
        self.tally.annotations += sum(len(found) for _, found in batch)

    def _log(self, annotations: list[dict[str, Any]]) -> None:
        # sync: Phoenix answers once they are stored, so an unknown span is a 404 here.
        self._phoenix().spans.log_span_annotations(span_annotations=annotations, sync=True)

    def _unreachable(self, exc: Exception) -> ConfigError:
        return ConfigError(
            f"--phoenix {self.url}: Phoenix could not be reached ({type(exc).__name__}: {exc}); "
            "start it (phoenix serve) or fix the URL"
        )

    def _refused(self, exc: httpx.HTTPStatusError) -> ConfigError:
        answer = exc.response
        said = answer.text.strip()[:200]
        hint = " (set PHOENIX_API_KEY)" if answer.status_code in {401, 403} else ""
        return ConfigError(
            f"--phoenix {self.url}: Phoenix refused VERA's request with HTTP "
            f"{answer.status_code}{hint}: {said}"
        )


def _client_module() -> Any:
    try:
        return importlib.import_module("phoenix.client")
    except ImportError:
        raise ConfigError(
            f"--phoenix needs Phoenix's client; install it with {INSTALL_HINT}"
        ) from None


def annotate_phoenix(
    results: Iterable[SampleResult],
    samples: Iterable[Sample] | Mapping[str, str],
    url: str,
    *,
    judge: str | None = None,
) -> PhoenixTally:
    """Annotate `results` in the Phoenix at `url`, each on its sample's span: `samples` are
    the dataset's samples (their `root_span_id`) or a mapping of sample id to span id.
    Phoenix is asked first, so a URL where another server answers (every annotation a 404)
    is a `ConfigError`, not every answer counted as a span Phoenix lacks."""
    ids = dict(samples) if isinstance(samples, Mapping) else span_ids(samples)
    annotator = PhoenixAnnotator(url, judge=judge)
    annotator.check()
    return annotator.send((result, ids.get(result.id)) for result in results)
