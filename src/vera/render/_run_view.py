"""A finished run as every reporter reads it: one `RunView` per run, shared by all its outputs.

The view holds the report and the gate results, and loads the rest only when a reporter asks:
the per-sample results (streamed from the run store on each pass, or `report.samples`), the
dataset's samples for their texts, and the trend over earlier runs (each loaded at most once per
view). So five outputs of one run read the dataset once and open the store once
(`vera.render.open_run_view` builds the view over one store).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from vera._results._builder import ResultSource
from vera._types import Conversation, Sample
from vera._types._report import Report, SampleResult
from vera.render._view import HistoryPoint

SampleLoader = Callable[[], Mapping[str, Sample]]
HistoryLoader = Callable[[], Sequence[HistoryPoint]]
ConversationLoader = Callable[[], Mapping[str, Conversation]]
DatasetReader = Callable[[], Iterable[Sample]]


def _no_samples() -> Mapping[str, Sample]:
    return {}


def _no_conversations() -> Mapping[str, Conversation]:
    return {}


def _no_history() -> Sequence[HistoryPoint]:
    return ()


class RunView:
    """A finished run, loading lazily: what `Reporter.write(view, out)` reads.

    `report` holds the aggregates (and, for a run that kept them, the samples' results);
    `gate_failures` what the gates found; `run_id` the run's id in the history (None when it
    was not stored); `links` (label, URL) pairs the HTML report shows
    above its title. `results` reads a streamed run's results back (each call a fresh pass);
    `samples` and `history` load the dataset's samples by id and the trend (oldest first) the
    first time they are read; `conversations` the dataset's conversations by id (their every
    message, for the HTML report's threads), for a run over conversation turns;
    `thread_link` the URL of a page of each conversation less its id, where one exists.
    """

    def __init__(
        self,
        report: Report,
        *,
        gate_failures: Sequence[str] = (),
        run_id: str | None = None,
        results: ResultSource | None = None,
        samples: SampleLoader = _no_samples,
        history: HistoryLoader = _no_history,
        links: Sequence[tuple[str, str]] = (),
        conversations: ConversationLoader = _no_conversations,
        thread_link: str | None = None,
        dataset: DatasetReader | None = None,
    ) -> None:
        self.report = report
        self._read_dataset = dataset
        self.thread_link = thread_link
        self.gate_failures = tuple(gate_failures)
        self.run_id = run_id
        self.links = tuple(links)
        self._results = results
        self._load_samples = samples
        self._load_history = history
        self._load_conversations = conversations

    @property
    def streamed(self) -> bool:
        """Whether the results are read from the store rather than `report.samples`."""
        return self._results is not None

    def sample_results(self) -> Iterable[SampleResult]:
        """Every sample's result in dataset order, streamed when the run streamed them; each
        call is a new pass. Reporters iterate this, never `report.samples`."""
        return self._results() if self._results is not None else self.report.samples

    @functools.cached_property
    def samples(self) -> Mapping[str, Sample]:
        """The dataset's samples by id (their query, response and contexts), read once; empty
        when the dataset cannot be read any more."""
        return self._load_samples()

    def dataset_samples(self) -> Iterator[Sample]:
        """The dataset's samples in its order, streamed (each call a new pass) where the view
        can read the dataset again, else from `samples`: for a report that shows each
        result's texts without holding the whole dataset (the JSON report)."""
        if self._read_dataset is None or "samples" in self.__dict__:
            return iter(self.samples.values())
        return iter(self._read_dataset())

    @functools.cached_property
    def conversations(self) -> Mapping[str, Conversation]:
        """The dataset's conversations by id, read once; empty for a run over no
        conversation, or when the dataset cannot be read any more."""
        if self.report.conversations is None:
            return {}
        return self._load_conversations()

    @functools.cached_property
    def history(self) -> Sequence[HistoryPoint]:
        """The dataset's earlier finished runs, oldest first, read once; empty without a
        history."""
        return tuple(self._load_history())

    def context(self) -> RenderContext:
        """The view as the `RenderContext` a `render(report, context)` reporter takes, with
        the same data (loaded now)."""
        return RenderContext(
            samples=self.samples,
            history=self.history,
            gate_failures=self.gate_failures,
            results=self._results,
            links=self.links,
        )

    @classmethod
    def of(cls, report: Report, context: RenderContext) -> RunView:
        """A view of `report` with what `context` already holds."""
        samples, history = context.samples, context.history
        return cls(
            report,
            gate_failures=context.gate_failures,
            results=context.results,
            samples=lambda: samples,
            history=lambda: history,
            links=context.links,
        )


@dataclass(frozen=True)
class RenderContext:
    """What a `render(report, context)` reporter gets besides the report, all loaded: the
    evaluated `samples` by id, earlier runs' `history` (oldest first), the gates'
    `gate_failures`, `results` where a run streamed its per-sample results to the run store,
    and `links` for the HTML report's title. `RunView.context()` builds it; new reporters
    take the `RunView` itself."""

    samples: Mapping[str, Sample] = field(default_factory=dict)
    history: Sequence[HistoryPoint] = ()
    gate_failures: Sequence[str] = ()
    results: ResultSource | None = None
    links: Sequence[tuple[str, str]] = ()

    def sample_results(self, report: Report) -> Iterable[SampleResult]:
        """Every sample's result, in dataset order, read once: from `results` when the run
        streamed them, else `report.samples`. Renderers iterate this, never `report.samples`."""
        return self.results() if self.results is not None else report.samples
