"""The HTML report in any script, opened from disk in headless Chromium: Arabic and Hebrew read
right to left, CJK and combining characters come through whole, with system fonts only and
no request leaving the page. Skips without Chromium or Playwright, except under CI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tests.support.chromium import ARTIFACTS, READY, skip_or_fail
from tests.support.chromium import launch as _launch
from tests.support.chromium import open_page as _open

import vera
from vera import Sample
from vera.render import render_html

if TYPE_CHECKING:
    from playwright.sync_api import Page

SAMPLES = [
    Sample(
        id="ar",
        query="ما هي فترة الإرجاع؟",
        response="فترة الإرجاع 60 يومًا. يتم رد المبلغ إلى وسيلة الدفع الأصلية.",
        contexts=["فترة الإرجاع 60 يومًا من تاريخ الاستلام."],
    ),
    Sample(
        id="he",
        query="מהי תקופת ההחזרה?",
        response="תקופת ההחזרה היא 60 יום.",
        contexts=["תקופת ההחזרה היא 60 יום מיום המסירה."],
    ),
    Sample(
        id="ja",
        query="返品期間は？",
        response="返品期間は60日です。返金は元の支払い方法に行われます。",
        contexts=["返品期間は60日です。返金は元の支払い方法に行われます。"],
    ),
    Sample(
        id="hi",
        query="वापसी की अवधि क्या है?",
        response="वापसी की अवधि 60 दिन है। धनवापसी मूल भुगतान विधि से की जाती है।",
        contexts=["वापसी की अवधि 60 दिन है।"],
    ),
]


@pytest.fixture(scope="module")
def report_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with pytest.warns(Warning):  # the Arabic, Hebrew and Hindi samples are refused: exit 3
        report = vera.evaluate(SAMPLES)
    path = tmp_path_factory.mktemp("html") / "languages.html"
    samples = {s.id: s for s in SAMPLES}
    path.write_text(render_html(report, samples=samples), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def page(report_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    skip_or_fail()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = _launch(driver, tmp_path_factory.mktemp("chromium-profile"))
        tab, log = _open(browser, report_path.as_uri())
        tab.wait_for_selector(READY)
        yield tab, log
        browser.close()


def _open_sample(tab: Page, sample_id: str) -> Any:
    article = tab.locator(f'article.sample[data-sample-id="{sample_id}"]')
    if article.locator("> details").get_attribute("open") is None:
        article.locator("> details > summary").click()
    return article


def _direction(node: Any) -> str:
    return str(node.evaluate("n => getComputedStyle(n).direction"))


def test_right_to_left_text_reads_right_to_left_and_the_page_stays_left_to_right(
    page: tuple[Page, Any], report_path: Path
) -> None:
    tab, log = page
    for sample_id in ("ar", "he"):
        article = _open_sample(tab, sample_id)
        query = article.locator(".query-text")
        assert query.get_attribute("dir") == "auto"
        assert _direction(query) == "rtl"
        response = article.locator("p.response")
        assert response.get_attribute("dir") == "auto"
        assert _direction(response) == "rtl"
        assert sample_id in article.locator(".language").inner_text()
    assert _direction(tab.locator("h1")) == "ltr"
    ARTIFACTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / "report-languages.png"), full_page=True)
    assert log.problems(report_path.as_uri()) == []


def test_cjk_and_combining_characters_come_through_whole(page: tuple[Page, Any]) -> None:
    tab, _ = page
    japanese = _open_sample(tab, "ja").locator("p.response")
    assert japanese.get_attribute("lang") == "ja"
    assert _direction(japanese) == "ltr"
    shown = japanese.inner_text()
    for sentence in ("返品期間は60日です。", "返金は元の支払い方法に行われます。"):
        assert sentence in shown
    # Two claims, each highlighted where it stands.
    assert japanese.locator("mark.claim").count() == 2
    hindi = _open_sample(tab, "hi")
    assert "अवधि" in hindi.locator(".query-text").inner_text()
