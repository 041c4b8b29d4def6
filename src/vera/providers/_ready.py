"""Local judges: whether the server on this machine is ready, and defaults that suit it.

A model served on this machine (`ollama:MODEL`, or any OpenAI-compatible server at a base URL
on loopback: llama.cpp's `llama-server`, llama-cpp-python, vLLM, LM Studio) fails in its own
ways: the server is not started, it runs another model than the one named, its context window
is shorter than the prompts. `ServerReadiness` asks the server's `/models` once, before the
first call, and names what is wrong, so a run stops (exit 2) before any sample is judged
rather than after its first calls all fail. It asks nothing of a remote provider.

A CPU server answers one request at a time and one call can take minutes, so the defaults of
a run are wrong for it: `local_defaults` gives, for a run whose judge is local, the settings
that suit one local model in place of those left unset (a value given is kept, even one equal
to the default: it is told from one left unset by pydantic's `model_fields_set`, not by value).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel

from vera._types._secrets import redact
from vera.providers._base import BadRequestError, ChatRequest, ProviderUnavailableError
from vera.providers._http import CONTEXT_ADVICE

LOCAL_DEFAULTS: dict[str, float | int] = {
    "timeout": 600.0,
    "sample_timeout": 3600.0,
    "provider_concurrency": 1,
}
"""For a local judge: seconds one call may take (a CPU server takes tens of seconds to
minutes), seconds one sample's judge work may take (several such calls), and calls in flight
(one: a CPU server answers one request at a time, and a call waiting at the server would spend
its timeout there). Samples in flight stay as set: a conversation's turns are judged together,
and a turn waiting for its group must not hold the only sample slot (one slot deadlocked
`single_call` on conversations); the one call slot already queues them in VERA."""

_PROBE_TIMEOUT = 10.0
"""Seconds the readiness check waits for `/models`: a loaded server answers it at once."""

_PROBED = ("openai", "ollama")
"""The OpenAI-compatible providers: the API local model servers speak, and `ServerReadiness`
asks."""

_LOCAL_PROVIDERS = ("ollama",)
"""Providers whose server is on this machine by default (`ollama:` at 127.0.0.1:11434)."""


def serves_locally(spec: str, base_url: str | None) -> bool:
    """Whether the judge `spec` ("PROVIDER:MODEL") runs on this machine: an Ollama model at
    its default URL, or any model at a base URL on loopback (127.0.0.0/8, ::1, localhost)."""
    provider = spec.strip().partition(":")[0].strip().lower()
    if not base_url:
        return provider in _LOCAL_PROVIDERS
    host = urlsplit(base_url if "//" in base_url else f"//{base_url}").hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def local_defaults(settings: BaseModel, spec: str, base_url: str | None) -> dict[str, float | int]:
    """The settings of `settings` (a run's, or a judge's options) that a local model changes,
    where the model `spec` at `base_url` is an OpenAI-compatible server on this machine:
    each of `LOCAL_DEFAULTS` that `settings` has and was not given (not in its
    `model_fields_set`, which `Settings.merge` keeps through the layers); none for a remote
    model. Apply them with `settings.model_copy(update=...)`."""
    if not is_local_model(spec, base_url):
        return {}
    fields, given = type(settings).model_fields, settings.model_fields_set
    return {
        key: value for key, value in LOCAL_DEFAULTS.items() if key in fields and key not in given
    }


@dataclass
class ServerReadiness:
    """Asks a local OpenAI-compatible server at `base_url` whether it serves `model`, once.

    `check()` raises `ProviderUnavailableError` (which stops the run) when nothing answers at
    the URL, or when the server lists its models and `model` is not among them (naming those
    it has). Where the server reports its context window (vLLM's `max_model_len`, llama.cpp's
    `/props`), `context_window` keeps it and `check_fits` refuses a prompt that cannot fit.
    """

    base_url: str
    model: str
    context_window: int | None = None
    _done: bool = False
    _lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = field(
        default=None, repr=False, compare=False
    )

    async def check(self) -> None:
        if self._done:
            return
        # The first samples of a run call at once: one of them asks, the others wait for
        # its answer. A lock belongs to one event loop, and a judge may serve several runs.
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        async with self._lock[1]:
            if self._done:
                return
            async with httpx.AsyncClient(timeout=_PROBE_TIMEOUT) as client:
                listed = await self._models(client)
                if listed is not None:
                    self._check_model(listed)
                    window = _window(listed.get(self.model)) or await self._props(client)
                    self.context_window = window
            self._done = True

    def check_fits(self, request: ChatRequest, chars_per_token: int) -> None:
        """Refuse a prompt that cannot fit the server's context window, before sending it.
        Counted low (`chars_per_token` characters a token), so only a sure overflow is."""
        window = self.context_window
        if window is None:
            return
        tokens = sum(len(m.content) for m in request.messages) // chars_per_token
        if tokens > window:
            raise BadRequestError(
                f"the prompt is at least {tokens:,} tokens, longer than the context window of "
                f"{window:,} tokens that {self._where} reports. {CONTEXT_ADVICE}"
            )

    @property
    def _where(self) -> str:
        return redact(self.base_url)

    async def _models(self, client: httpx.AsyncClient) -> dict[str, dict[str, Any]] | None:
        """The models the server lists, by id; None when it has no such list to give."""
        url = f"{self.base_url.rstrip('/')}/models"
        try:
            response = await client.get(url)
        except httpx.ReadTimeout:
            # Connected, but no answer yet: a CPU server answers one request at a time, and a
            # generation for another client (or another run) holds it. It is up, so the
            # calls' own timeout decides, not this probe's (measured: four rubric runs beside
            # a benchmark on the same llama-cpp-python server all stopped here).
            return None
        except httpx.TimeoutException:
            raise self._stop(
                f"the server at {self._where} did not answer within {_PROBE_TIMEOUT:g}s; check "
                "that it has finished starting and is not stuck"
            ) from None
        except httpx.HTTPError as exc:
            raise self._stop(
                f"could not reach the judge: no server answers at {self._where} "
                f"({type(exc).__name__}); start it, or "
                "point --judge-base-url at the one that runs"
            ) from None
        try:
            data = response.json() if response.status_code == 200 else None
        except ValueError:
            data = None
        entries = data.get("data") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            return None  # a server without the list (or a proxy): the first call tells
        return {str(e.get("id")): e for e in entries if isinstance(e, dict) and e.get("id")}

    def _check_model(self, listed: dict[str, dict[str, Any]]) -> None:
        if not listed or self.model in listed or f"{self.model}:latest" in listed:
            return  # Ollama answers "NAME" with "NAME:latest"
        names = ", ".join(sorted(listed)[:20])
        raise self._stop(
            f"the server at {self._where} has no model {self.model!r}; it has: {names}. Name "
            "one of them in --judge, or load the model on the server (ollama pull MODEL; "
            "llama-cpp-python --model_alias)"
        )

    async def _props(self, client: httpx.AsyncClient) -> int | None:
        """llama.cpp's `llama-server` reports its context (per slot) at /props."""
        root = self.base_url.rstrip("/").removesuffix("/v1")
        try:
            response = await client.get(f"{root}/props")
            data = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        settings = data.get("default_generation_settings") if isinstance(data, dict) else None
        return _window(settings) if isinstance(settings, dict) else None

    def _stop(self, message: str) -> ProviderUnavailableError:
        self._done = True
        return ProviderUnavailableError(f"{message} (the readiness check before the run)")


def _window(entry: dict[str, Any] | None) -> int | None:
    """The context window a model entry states: vLLM's `max_model_len`, llama.cpp's `n_ctx`,
    LM Studio's `loaded_context_length`."""
    if not entry:
        return None
    for key in ("max_model_len", "n_ctx", "loaded_context_length"):
        value = entry.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def readiness_for(spec: str, base_url: str | None, *, fail_fast: int) -> ServerReadiness | None:
    """The readiness check for the model `spec` at `base_url`: for an OpenAI-compatible
    server on this machine, unless the fail-fast check is off (`fail_fast` 0: the run is to
    go on whatever its first calls show)."""
    if not fail_fast or not is_local_model(spec, base_url):
        return None
    from vera.providers._openai import DEFAULT_OLLAMA_URL

    model = spec.strip().partition(":")[2].strip()
    return ServerReadiness(base_url or DEFAULT_OLLAMA_URL, model)


def is_local_model(spec: str, base_url: str | None) -> bool:
    """An OpenAI-compatible model server on this machine: what local models are served by
    (an Anthropic URL on loopback is a proxy or a test double, not a local model)."""
    provider = spec.strip().partition(":")[0].strip().lower()
    return provider in _PROBED and serves_locally(spec, base_url)
