"""Where a GitHub Actions job runs, and its one pull-request comment, over GitHub's REST API.

The runner describes the job in environment variables (`GITHUB_API_URL`, `GITHUB_REPOSITORY`,
`GITHUB_EVENT_PATH`, ...) and the token comes from the environment only. A comment is found by
its hidden marker (`<!-- vera-eval:NAME -->`) over every page of the issue's comments, then
updated, or created when none has it, so a pull request never gets a second one.

Every message that may reach a log has the token masked (`mask_secret`): GitHub echoes nothing
of it, but a proxy or a misconfigured server might, and a job log is readable by anyone who can
read the repository.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from vera._types._errors import ConfigError
from vera._types._secrets import mask_secret

COMMENT_EVENTS = frozenset({"pull_request", "pull_request_target"})
"""The events whose payload names a pull request to comment on."""
_PAGE_SIZE = 100  # GitHub's largest page of issue comments
_MAX_PAGES = 100  # 10,000 comments: a bound, so a server that always says "next" cannot loop
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="next"')
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class GitHubApiError(ConfigError):
    """GitHub's API refused or could not be reached: the message says which call, the status,
    and what to do; it never holds the token."""


def comment_marker(name: str) -> str:
    """The hidden line that identifies the comment of the report named `name`."""
    if not _NAME.match(name):
        raise ConfigError(
            f"report name {name!r}: use 1 to 64 letters, digits, '.', '_' or '-' "
            "(it goes in the comment's hidden marker)"
        )
    return f"<!-- vera-eval:{name} -->"


@dataclass(frozen=True)
class GitHubJob:
    """The job as the runner describes it: where the API is, which repository and run, and
    the pull request the event is about (None outside one, as on a push)."""

    api_url: str
    server_url: str
    repository: str
    run_id: str | None
    event_name: str
    pull_request: int | None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GitHubJob:
        """Read the runner's variables; `GITHUB_REPOSITORY` is required, the rest default as
        on github.com. A pull-request event's number comes from its payload file."""
        repository = env.get("GITHUB_REPOSITORY", "")
        if repository.count("/") != 1 or not all(repository.split("/")):
            raise ConfigError(
                f"GITHUB_REPOSITORY is {repository!r}: expected OWNER/NAME, as the Actions "
                "runner sets it; outside Actions, export it"
            )
        event = env.get("GITHUB_EVENT_NAME", "")
        number = _pull_request(env.get("GITHUB_EVENT_PATH")) if event in COMMENT_EVENTS else None
        return cls(
            api_url=env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/"),
            server_url=env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/"),
            repository=repository,
            run_id=env.get("GITHUB_RUN_ID") or None,
            event_name=event,
            pull_request=number,
        )

    @property
    def run_url(self) -> str | None:
        """The Actions run's page, where its artifacts are listed; None without a run id."""
        if self.run_id is None:
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"


def _pull_request(event_path: str | None) -> int:
    """The pull request's number from the event payload (`GITHUB_EVENT_PATH`)."""
    if not event_path:
        raise ConfigError("GITHUB_EVENT_PATH is not set: the runner names the event's payload")
    path = Path(event_path)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"GITHUB_EVENT_PATH {path}: cannot read the event payload ({exc})"
        ) from None
    number = payload.get("pull_request", {}).get("number") if isinstance(payload, dict) else None
    if not isinstance(number, int) or isinstance(number, bool):
        raise ConfigError(f"{path}: the event payload has no pull_request.number")
    return number


@dataclass(frozen=True)
class CommentResult:
    """What `upsert_comment` did: created or updated the comment with this id and page."""

    action: Literal["created", "updated"]
    id: int
    url: str


def upsert_comment(
    job: GitHubJob,
    number: int,
    marker: str,
    body: str,
    token: str,
    *,
    timeout_s: float = 30.0,
) -> CommentResult:
    """Update the comment of issue or pull request `number` that starts with `marker`, or
    create one: `body` must start with the marker, so the next call finds it. Raises
    `GitHubApiError`."""
    if not body.startswith(marker):
        raise ValueError("the comment body must start with its marker")
    if not token:
        raise GitHubApiError(
            "no GitHub token: set GITHUB_TOKEN (the action passes its github-token input)"
        )
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
    }
    issue = f"{job.api_url}/repos/{job.repository}/issues"
    with httpx.Client(headers=headers, timeout=timeout_s) as client:
        found = _find(client, f"{issue}/{number}/comments?per_page={_PAGE_SIZE}", marker, token)
        if found is None:
            reply = _call(client, "POST", f"{issue}/{number}/comments", body, token)
            return CommentResult("created", int(reply["id"]), str(reply.get("html_url", "")))
        reply = _call(client, "PATCH", f"{issue}/comments/{found}", body, token)
        return CommentResult("updated", int(reply["id"]), str(reply.get("html_url", "")))


def _find(client: httpx.Client, url: str, marker: str, token: str) -> int | None:
    """The id of the first comment that starts with `marker`, over every page (`Link:
    rel="next"`)."""
    next_url: str | None = url
    for _ in range(_MAX_PAGES):
        if next_url is None:
            return None
        response = _send(client, "GET", next_url, None, token)
        comments = _json(response, "GET", next_url)
        if not isinstance(comments, list):
            raise GitHubApiError(f"GET {next_url}: expected a list of comments")
        for comment in comments:
            # VERA's comment starts with its marker; one that only quotes it is someone else's.
            if isinstance(comment, dict) and str(comment.get("body") or "").startswith(marker):
                return int(comment["id"])
        link = _NEXT.search(response.headers.get("link", ""))
        next_url = link.group(1) if link else None
        if next_url is not None and urlsplit(next_url)[:2] != urlsplit(url)[:2]:
            # The token goes with every page: never to a host the API did not name.
            raise GitHubApiError(f"GET {url}: the next page is on another host ({next_url})")
    raise GitHubApiError(f"GET {url}: more than {_MAX_PAGES} pages of comments; stopped")


def _call(client: httpx.Client, method: str, url: str, body: str, token: str) -> dict[str, Any]:
    reply = _json(_send(client, method, url, {"body": body}, token), method, url)
    if not isinstance(reply, dict) or not isinstance(reply.get("id"), int):
        raise GitHubApiError(f"{method} {url}: the reply has no comment id")
    return reply


def _send(
    client: httpx.Client, method: str, url: str, payload: dict[str, str] | None, token: str
) -> httpx.Response:
    try:
        response = client.request(method, url, json=payload)
    except httpx.HTTPError as exc:
        reason = mask_secret(str(exc) or type(exc).__name__, token)
        raise GitHubApiError(f"{method} {url}: could not reach GitHub's API ({reason})") from None
    if response.status_code >= 400:
        raise GitHubApiError(mask_secret(_refusal(method, url, response), token))
    return response


def _json(response: httpx.Response, method: str, url: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise GitHubApiError(f"{method} {url}: the reply is not JSON") from None


_ADVICE = {
    401: "the token is missing, expired or wrong: pass github-token (default: the job's "
    "GITHUB_TOKEN)",
    403: "the token may not write comments: give the workflow `permissions: pull-requests: "
    "write`; a pull request from a fork gets a read-only token, so set comment: false there",
    404: "no such repository or pull request for this token: check GITHUB_REPOSITORY and the "
    "token's access",
}


def _refusal(method: str, url: str, response: httpx.Response) -> str:
    """The API's refusal as one line: the call, the status, GitHub's own message, the fix."""
    try:
        detail = response.json().get("message")
    except (ValueError, AttributeError):
        detail = None
    said = f": {' '.join(str(detail).split())[:200]}" if detail else ""
    advice = _ADVICE.get(response.status_code, "GitHub's API failed; run the job again later")
    return f"{method} {url} answered {response.status_code}{said}; {advice}"
