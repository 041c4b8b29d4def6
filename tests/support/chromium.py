"""Headless Chromium for the browser tests: the system's `chromium`, driven by Playwright's
Python package over a pipe (no port opened), with flags that keep it offline.

Playwright's own browser download is never used. Without Chromium (or Playwright) the browser
tests skip, except under CI (`CI` set), where they fail: see `skip_or_fail`.
"""

from __future__ import annotations

import colorsys
import importlib.util
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.extras import without

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, Playwright

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
"""Where screenshots land (git-ignored)."""
READY = "#sample-list[data-state=ready]"
"""The report's first page of samples is in."""


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not Path(CHROMIUM).exists():
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    if importlib.util.find_spec("playwright") is None:
        return f"the playwright package is not installed: {without('test-all')}"
    return None


def skip_or_fail() -> None:
    """Skip the test when Chromium or Playwright is missing; fail instead under CI."""
    reason = missing()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so the browser tests must run")
    pytest.skip(reason)


def launch(
    playwright: Playwright,
    profile: Path,
    *,
    javascript: bool = True,
    width: int = 1280,
    height: int = 900,
) -> BrowserContext:
    """Chromium with a fresh profile folder (`--user-data-dir`) and the offline flags."""
    return playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        headless=True,
        args=FLAGS,
        java_script_enabled=javascript,
        viewport={"width": width, "height": height},
    )


@dataclass
class Log:
    """What the page said and asked for while a test used it."""

    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def problems(self, own_url: str) -> list[str]:
        """Console errors and warnings, script errors, and requests for anything but the
        file itself (its `#fragment` is no request of its own)."""
        own = own_url.split("#", 1)[0]
        foreign = [url for url in self.requests if url.split("#", 1)[0] != own]
        return self.console + self.errors + [f"request to {url}" for url in foreign]

    def problems_outside(self, origin: str) -> list[str]:
        """The same, for a site: requests for anything but `origin`'s own pages are foreign."""
        foreign = [url for url in self.requests if not url.startswith(origin + "/")]
        return self.console + self.errors + [f"request to {url}" for url in foreign]


def watch(page: Page) -> Log:
    """A log of what `page` says and asks for from now on."""
    page.set_default_timeout(10_000)
    log = Log()
    page.on(
        "console",
        lambda m: (
            log.console.append(f"{m.type}: {m.text}") if m.type in {"error", "warning"} else None
        ),
    )
    page.on("pageerror", lambda e: log.errors.append(str(e)))
    page.on("request", lambda r: log.requests.append(r.url))
    return log


def open_page(browser: BrowserContext, url: str) -> tuple[Page, Log]:
    """A new tab on `url`, logging what the page says and asks for, once its samples show."""
    page = browser.new_page()
    log = watch(page)
    page.goto(url)
    page.wait_for_load_state("load")
    page.wait_for_selector(READY, state="attached")
    return page, log


def _rgb(css: str) -> tuple[float, float, float]:
    found = re.match(r"rgba?\((\d+), (\d+), (\d+)", css)
    assert found, css
    red, green, blue = (int(v) / 255 for v in found.groups())
    return red, green, blue


def colour_name(css: str) -> str:
    """The colour a person would name a computed CSS colour: green, amber, red or grey."""
    hue, _lightness, saturation = colorsys.rgb_to_hls(*_rgb(css))
    degrees = hue * 360
    if saturation < 0.15:
        return "grey"
    if degrees < 20 or degrees > 340:
        return "red"
    if degrees < 60:
        return "amber"
    if 80 < degrees < 160:
        return "green"
    return f"other ({degrees:.0f} degrees)"
