"""The documentation site, built with `mkdocs build --strict` and opened in headless Chromium.

The home page, one API reference page, the comparison page and the plot gallery must load without a console
error (a failed image or script load is one), show their images (each `<img>` decoded, with a size) and render
something other than a blank page (a screenshot whose pixels are not all one colour).  The pictures of the
comparison page and of the gallery, made when the site is built (docs/_hooks.py), must not be one colour, and
the HTML report the comparison page writes must render its table without a console error.  On every page of
the site, at 1280 px, no table is wider than its frame (none needs sideways scrolling) and no inline code span
wraps inside a word (`reciproca l_rank`): a code span wraps at its spaces only; on a phone (390 px) no page
scrolls sideways (a wide table scrolls in its own frame).

Skips with the reason where mkdocs (the `docs` extra), selenium, Chromium or chromedriver is missing, unless
LODESTAR_REQUIRE_BROWSER=1 (CI), which turns the skip into a failure.  SITE_DIR, when set, names a site already
built (CI builds it once), which is served instead of building one here.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.conftest import REPO_ROOT

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
CHROMEDRIVER_NAMES = ("chromedriver",)
PAGES = {
    "home": "index.html",
    "API reference": "api/namespace/index.html",
    "comparing systems and the pictures": "compare/index.html",
    "plot gallery": "plots/index.html",
}
REPORT = "compare_report.html"


def first_on_path(names: tuple[str, ...]) -> str | None:
    return next((path for name in names if (path := shutil.which(name)) is not None), None)


def browser_unavailable() -> str | None:
    """Why the site cannot be built and opened here, or None."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        return "mkdocs is not installed (pip install 'lodestar-polars[docs]')"
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install 'lodestar-polars[docs]')"
    if first_on_path(CHROMIUM_NAMES) is None:
        return "no Chromium on PATH (apt-get install chromium chromium-driver)"
    if first_on_path(CHROMEDRIVER_NAMES) is None:
        return "no chromedriver on PATH (apt-get install chromium-driver)"
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = browser_unavailable()
    if reason is not None:
        if os.environ.get("LODESTAR_REQUIRE_BROWSER") == "1":
            pytest.fail(f"LODESTAR_REQUIRE_BROWSER=1, but {reason}")
        pytest.skip(reason)
    built = os.environ.get("SITE_DIR")
    if built:
        return Path(built)
    folder = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr[-5000:]}"
    return folder


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The site on http://127.0.0.1:PORT/, a free port, for the module's tests."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def browser(served: str) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(first_on_path(CHROMIUM_NAMES))
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1280,2000")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(str(first_on_path(CHROMEDRIVER_NAMES))))
    try:
        yield driver
    finally:
        driver.quit()


def load(browser: Any, url: str) -> None:
    """Open `url` and wait (up to a minute, on a loaded machine) until the page and its resources have loaded."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(url)
    WebDriverWait(browser, 60).until(lambda driver: driver.execute_script("return document.readyState") == "complete")


@pytest.mark.parametrize("page", list(PAGES), ids=list(PAGES))
def test_page_loads_without_console_errors_and_images_render(page: str, browser: Any, served: str) -> None:
    browser.get_log("browser")  # drop what earlier pages logged
    load(browser, served + PAGES[page])
    title = browser.title
    assert "lodestar-polars" in title, f"{page}: the page's title is {title!r}"
    images = browser.execute_script(
        "await Promise.all([...document.images].map(i => i.decode().catch(() => null)));"
        "return [...document.images].map(i => [i.currentSrc || i.src, i.complete, i.naturalWidth, i.naturalHeight]);"
    )
    broken = [source for source, complete, width, height in images if not complete or width == 0 or height == 0]
    assert not broken, f"{page}: images that did not render: {broken}"
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, f"{page}: console errors: {errors}"
    screenshot = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
    low, high = zip(*screenshot.getextrema(), strict=True)
    assert low != high, f"{page}: the screenshot is one colour {low}: a blank page"


def page_images(browser: Any, served: str, page: str) -> dict[str, Image.Image]:
    """The pictures `page` shows, by file name, as the site serves them."""
    load(browser, served + PAGES[page])
    sources = browser.execute_script("return [...document.images].map(i => i.currentSrc || i.src)")
    pictures = {}
    for source in sources:
        with urllib.request.urlopen(source, timeout=60) as response:
            pictures[Path(source).name] = Image.open(io.BytesIO(response.read())).convert("RGB")
    return pictures


def assert_not_one_colour(pictures: dict[str, Image.Image]) -> None:
    for name, picture in pictures.items():
        low, high = zip(*picture.getextrema(), strict=True)
        assert low != high, f"{name} is one colour {low}"
        assert min(picture.size) >= 100, f"{name} is {picture.size} pixels"


def test_comparison_page_shows_its_four_pictures(browser: Any, served: str) -> None:
    pictures = page_images(browser, served, "comparing systems and the pictures")
    expected = {f"compare_{name}.png" for name in ("means", "per_query_delta", "distribution", "cutoff_curve")}
    assert expected <= set(pictures), f"the comparison page shows {sorted(pictures)}"
    assert_not_one_colour(pictures)


def test_the_gallery_shows_every_plot_made_at_build_time(browser: Any, served: str) -> None:
    pictures = page_images(browser, served, "plot gallery")
    expected = {
        f"plot_{name}.png"
        for name in (
            "means",
            "means_worse",
            "per_query_delta",
            "distribution",
            "cutoff_curve",
            "cutoff_curve_precision",
        )
    }
    assert set(pictures) == expected, f"the gallery shows {sorted(pictures)}"
    assert_not_one_colour(pictures)
    # made by the build from the page's code, not kept in the source tree
    assert not [name for name in expected if (REPO_ROOT / "docs" / name).exists()]


def test_the_html_report_renders_its_table(browser: Any, served: str) -> None:
    browser.get_log("browser")
    load(browser, served + REPORT)
    # the page names no icon, so Chromium asks for the server's /favicon.ico, which the site has not
    errors = [
        entry
        for entry in browser.get_log("browser")
        if entry["level"] == "SEVERE" and not entry["message"].startswith(served + "favicon.ico ")
    ]
    assert not errors, f"{REPORT}: console errors: {errors}"
    table = browser.execute_script(
        "const table = document.querySelector('table');"
        "if (!table) return null;"
        "const texts = cells => [...cells].map(c => c.innerText.trim());"
        "return {"
        "  headers: texts(table.querySelectorAll('thead th')),"
        "  rows: [...table.querySelectorAll('tbody tr')].map(r => texts(r.querySelectorAll('th, td'))),"
        "  bold: [...table.querySelectorAll('tbody td')]"
        "    .filter(c => Number(getComputedStyle(c).fontWeight) >= 700).map(c => c.innerText.trim()),"
        "  note: texts(table.querySelectorAll('tfoot')).join(' '),"
        "  height: table.getBoundingClientRect().height,"
        "};"
    )
    assert table is not None, f"{REPORT} has no table"
    # the comparison page's table: hybrid best and significantly better than bm25 on both measures
    assert table["headers"] == ["model", "ndcg@5", "ndcg@10"]
    assert table["rows"] == [
        ["bm25", "0.6289", "0.6865"],
        ["hybrid", "0.7183†", "0.7644†"],
        ["dense", "0.6500", "0.7086"],
    ]
    assert table["bold"] == ["0.7183†", "0.7644†"]
    assert "significantly better than bm25 (two-sided paired permutation test" in table["note"]
    assert table["height"] > 50
    screenshot = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
    low, high = zip(*screenshot.getextrema(), strict=True)
    assert low != high, f"{REPORT}: the screenshot is one colour {low}: a blank page"


def test_the_gallery_chart_saved_as_html_draws_itself(browser: Any, served: str) -> None:
    """plot_means.html, which the gallery writes with `chart.save(..., inline=True)`: Vega draws the chart from
    the page's own scripts (tests/test_plot.py checks that the page fetches none)."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get_log("browser")
    load(browser, served + "plot_means.html")
    WebDriverWait(browser, 60).until(
        lambda driver: driver.execute_script("return document.querySelectorAll('canvas, svg.marks').length") > 0
    )
    errors = [
        entry
        for entry in browser.get_log("browser")
        if entry["level"] == "SEVERE" and not entry["message"].startswith(served + "favicon.ico ")
    ]
    assert not errors, f"plot_means.html: console errors: {errors}"


# every table of the page whose frame (the theme's scrolling wrapper, else the table itself, which scrolls too)
# is narrower than its content; and every inline code span with a line break that does not follow a space
LAYOUT_PROBLEMS = """
const tables = [...document.querySelectorAll('article table')];
const wide = tables.flatMap(table => {
  const frames = [table, table.closest('.md-typeset__scrollwrap')].filter(frame => frame !== null);
  const head = table.querySelector('tr').innerText.replace(/\\s+/g, ' ').slice(0, 80);
  return frames.filter(frame => frame.scrollWidth > frame.clientWidth)
    .map(frame => `${head}: ${frame.scrollWidth} px in ${frame.clientWidth}`);
});
const codes = [...document.querySelectorAll('article code')].filter(code => !code.closest('pre'));
const broken = [];
for (const code of codes) {
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  let lineTop = null, afterSpace = false, before = '';
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      const character = node.data[i];
      if (/\\s/.test(character)) { afterSpace = true; before += character; continue; }
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const box = range.getClientRects()[0];
      if (box) {
        if (lineTop !== null && box.top > lineTop + 2 && !afterSpace) {
          broken.push(before + '|' + code.textContent.slice(before.length));
        }
        lineTop = box.top;
        afterSpace = false;
      }
      before += character;
    }
  }
}
return {width: window.innerWidth, tables: tables.length, codes: codes.length, wide, broken};
"""


def test_no_table_scrolls_sideways_and_no_word_of_code_breaks_at_1280_px(browser: Any, served: str, site: Path) -> None:
    """Every page of the site at 1280 px: each table fits its frame, and a code span wraps only at a space."""
    pages = sorted(path.relative_to(site).as_posix() for path in site.rglob("index.html"))
    assert len(pages) >= 30, f"the site has {len(pages)} pages"
    problems, tables, codes = [], 0, 0
    for page in pages:
        load(browser, served + page)
        layout = browser.execute_script(LAYOUT_PROBLEMS)
        assert layout["width"] == 1280, f"{page}: the window is {layout['width']} px wide"
        tables, codes = tables + layout["tables"], codes + layout["codes"]
        problems += [f"{page}: table {table}" for table in layout["wide"]]
        problems += [f"{page}: code broken at {code!r}" for code in layout["broken"]]
    # the measure tables alone hold hundreds of code spans: a page that rendered no article would check nothing
    assert tables >= 50 and codes >= 2000, f"only {tables} tables and {codes} code spans checked"
    assert not problems, "\n".join(problems)


def test_no_page_scrolls_sideways_on_a_phone(browser: Any, served: str, site: Path) -> None:
    """Every page at 390 px (a phone): the page itself never scrolls sideways; a wide table scrolls in its frame."""
    pages = sorted(path.relative_to(site).as_posix() for path in site.rglob("index.html"))
    width, height = browser.get_window_size()["width"], browser.get_window_size()["height"]
    browser.set_window_size(390, 844)
    try:
        wide = []
        for page in pages:
            load(browser, served + page)
            inner, scrolled, shown = browser.execute_script(
                "const root = document.documentElement;"
                "return [window.innerWidth, Math.max(root.scrollWidth, document.body.scrollWidth), root.clientWidth];"
            )
            assert inner == 390, f"{page}: the window is {inner} px wide"
            if scrolled > shown:
                wide.append(f"{page}: {scrolled} px in {shown}")
    finally:
        browser.set_window_size(width, height)
    assert not wide, "\n".join(wide)
