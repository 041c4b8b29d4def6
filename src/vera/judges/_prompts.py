"""Prompts as versioned data files that users can override.

A prompt file is TOML with `version`, `system` and `user`; `$name` placeholders in `user` are
filled per call. The version goes into every result and every cache key, so changing a prompt
never serves a stale cached reply. A file from `prompts_dir` that replaces a bundled prompt
gets its content's hash appended to the version it declares: a copy that keeps the bundled
`version` string cannot pass for the bundled prompt, and every edit changes the cache key.

Every placeholder value is data (an answer, a question, contexts, claims), and the prompts
fence it between tags such as `<answer>` and `</answer>`. `Prompt.render` makes any mention
of those tags inside a value inert (`</answer>` becomes `&lt;/answer&gt;`) before it fills
the template, so no response or context can close its own tag and pose as instructions.
"""

from __future__ import annotations

import functools
import hashlib
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Literal

from vera._types._errors import ConfigError
from vera.providers._base import Message

DATA_TAGS = frozenset(
    {"answer", "claims", "contexts", "passages", "question", "texts", "unsupported"}
)
"""The tags the bundled prompts fence data with. A custom prompt's own closing tags are read
from its template and protected as well."""

ReplyStyle = Literal["compact", "reasoned"]
REPLY_STYLES: tuple[ReplyStyle, ...] = ("compact", "reasoned")
"""The bundled prompt sets an LLM judge asks in (`--judge-replies`): "compact", the cheapest
replies, sized for hosted models billed per token; "reasoned", where a small model writes what
the context says about a claim before its verdict (issue 45, docs/local-judges.md). A prompt
the reasoned set lacks is the compact one."""

REPLY_FORMATS = ("fields", "compact")
"""What a prompt file's optional `reply_format` may say (see `Prompt.reply_format`)."""

_CLOSING_TAG = re.compile(r"</\s*([A-Za-z][\w-]*)\s*>")


@functools.lru_cache(maxsize=64)
def _tag_pattern(names: frozenset[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    # Whitespace inside the brackets and attributes ("< /ANSWER >", "<answer foo>") still read
    # as the tag to a model; a mention left unclosed at a line end ("</answer") is caught too.
    return re.compile(rf"<(\s*/?\s*(?:{alternatives})\b[^<>\n]{{0,200}})(>?)", re.IGNORECASE)


def neutralise_tags(text: str, names: Iterable[str]) -> str:
    """`text` with every mention of the tags `names` made inert: the angle brackets of
    `</answer>`, `< /ANSWER >` or `<answer foo>` become `&lt;` and `&gt;`.

    Nothing else changes, other `<` and `>` included, so a quote the judge copies from the
    text is still found in the original.
    """
    pattern = _tag_pattern(frozenset(name.lower() for name in names))
    return pattern.sub(lambda m: f"&lt;{m.group(1)}{'&gt;' if m.group(2) else ''}", text)


class Fenced(str):
    """A value built by its caller from data already made inert with `neutralise_tags` for
    the prompt's `tags` (and its own), around tags of the caller's that must stay: each turn
    of a conversation fenced in its own `<question>` and `<answer>`. `Prompt.render` fills
    it in as it is."""

    __slots__ = ()


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt: its version and the messages it renders to."""

    name: str
    version: str
    system: str
    user: str
    reply_format: str = "fields"
    """"compact": the prompt asks for a compact reply (rows, verdict codes; the bundled
    verification prompts), so the judge sends the compact schema with it; "fields" (the
    default, and what a prompt file without `reply_format` gets): named JSON fields."""

    @property
    def tags(self) -> frozenset[str]:
        """The tags made inert in every value: the bundled prompts' data tags and the
        closing tags of this prompt's own template."""
        return DATA_TAGS | frozenset(_CLOSING_TAG.findall(self.user))

    def render(self, *, cache_contexts: bool = False, **values: str) -> tuple[Message, ...]:
        """System message, then the user message with `$placeholders` filled by `values`, each
        with the prompt's data tags neutralised (see `neutralise_tags`), but a `Fenced` one.

        The system message carries a prompt-cache breakpoint (`Message.cache_break`): it
        repeats in every call. With `cache_contexts` (the caller will send the same contexts
        again), so does the user message, after the tag closing its `$contexts` block where
        the template has one: a cache write costs more than plain input, so only a prefix that
        will be read again is marked."""
        tags = self.tags
        safe = {
            key: str(value) if isinstance(value, Fenced) else neutralise_tags(value, tags)
            for key, value in values.items()
        }
        cut = _after_contexts(self.user) if cache_contexts else 0
        try:
            head = Template(self.user[:cut]).substitute(safe)
            user = head + Template(self.user[cut:]).substitute(safe)
        except KeyError as exc:
            raise ConfigError(f"prompt {self.name!r} uses an unknown placeholder {exc}") from None
        return (
            Message(role="system", content=self.system, cache_break=len(self.system)),
            Message(role="user", content=user, cache_break=len(head) if cut else None),
        )


_CONTEXTS_BLOCK = re.compile(r"\$\{?contexts\}?[^<]*?</\s*[A-Za-z][\w-]*\s*>")


def _after_contexts(template: str) -> int:
    """The offset in `template` just after the closing tag of its `$contexts` block (0: none)."""
    match = _CONTEXTS_BLOCK.search(template)
    return match.end() if match else 0


def load_prompt(name: str, prompts_dir: Path | None = None, style: str = "compact") -> Prompt:
    """Load `name`.toml from `prompts_dir` when it has one, else the bundled prompt: the one
    of the `style` set (`REPLY_STYLES`) where it has its own.

    A file from `prompts_dir` is versioned `"<its version>+sha256:<12 hex digits of its
    bytes>"`; a bundled prompt keeps the version it declares.
    """
    user_file = prompts_dir / f"{name}.toml" if prompts_dir is not None else None
    digest: str | None = None
    if user_file is not None and user_file.exists():
        raw = user_file.read_bytes()
        origin = str(user_file)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"{origin}: not UTF-8 text") from None
        digest = hashlib.sha256(raw).hexdigest()[:12]
    else:
        bundled = files("vera.judges") / "prompts"
        styled = bundled / style / f"{name}.toml"
        source = styled if style != "compact" and styled.is_file() else bundled / f"{name}.toml"
        text = source.read_text(encoding="utf-8")
        origin = f"bundled {name}.toml"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{origin}: invalid TOML ({exc})") from None
    missing = [key for key in ("version", "system", "user") if not isinstance(data.get(key), str)]
    if missing:
        raise ConfigError(f"{origin}: missing string field(s) {', '.join(missing)}")
    version = data["version"] if digest is None else f"{data['version']}+sha256:{digest}"
    reply_format = data.get("reply_format", "fields")
    if reply_format not in REPLY_FORMATS:
        raise ConfigError(
            f"{origin}: reply_format must be one of {', '.join(REPLY_FORMATS)}, "
            f"got {reply_format!r}"
        )
    return Prompt(
        name=name,
        version=version,
        system=data["system"],
        user=data["user"],
        reply_format=reply_format,
    )
