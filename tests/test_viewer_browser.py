"""The viewer in a real browser (issue 19, point 7): headless Chromium from Debian's packages
(``/usr/bin/chromium``, driven by Playwright's Python package; Playwright's own browser download
is not used) loads each view on a replayed database, opens a card down to a verbatim turn, moves
the time slider, searches, plays the growth demo, enters an API key, and saves a screenshot of
each view. Every wait is for a DOM condition, never a sleep. Without the browser these tests fail.

Set ``MEMFOLD_VIEWER_SHOTS=DIR`` to also copy the screenshots there (the README's come from
``MEMFOLD_VIEWER_SHOTS=docs/viewer``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import sync_playwright

from memfold import MemFold
from memfold.demo.session import WINDOW as SEED_WINDOW
from memfold.integrations.http import parse_keys
from viewer_support import CONV, SECRET, build_replayed_db, build_seed_db, digest, served, shows

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
KEY = "viewer-key-0123456789abcdef"
TIMEOUT = 60_000  # ms for each DOM condition (a shared 2-core machine)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"the viewer's browser tests need Chromium at {CHROMIUM}: apt-get install -y chromium "
                    "chromium-driver")
    profile = tempfile.mkdtemp(prefix="memfold-chromium-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=FLAGS, headless=True,
                                                       viewport={"width": 1280, "height": 900})
        context.set_default_timeout(TIMEOUT)
        yield context
        context.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    return build_replayed_db(tmp_path_factory.mktemp("browser") / "replayed.db")


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("shots")


@pytest.fixture
def page(browser):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    page.close()
    assert errors == [], errors


def screenshot(page, shots: Path, name: str, *, at: str | None = None, full: bool = False) -> Path:
    """Save a PNG of the viewport (scrolled to the element ``at`` first, else to the top), check
    it is a real, non-empty image, and copy it where asked. ``full``: the whole page."""
    path = shots / f"{name}.png"
    if at is not None:
        page.locator(at).first.scroll_into_view_if_needed()
    else:
        page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(path), full_page=full)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, (name, len(data))
    target = os.environ.get("MEMFOLD_VIEWER_SHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / path.name)
    return path


def test_conversation_view_opens_a_card_down_to_a_verbatim_turn_and_searches(replayed, page, shots):
    with MemFold(replayed, embedder=None, read_only=True) as mf:
        first = mf.conversation(CONV, create=False).history()[0]
    before = digest(replayed)
    with served(replayed, reader=[]) as url:
        page.goto(f"{url}/conversation/{CONV}")
        page.wait_for_selector("#strip .chip.card")
        assert "tokens" in page.inner_text("#meter")
        strip = page.eval_on_selector_all("#strip .chip", "els => els.map(e => e.dataset.ref)")
        tree = page.eval_on_selector_all("#tree > li", "els => els.map(e => e.dataset.ref)")
        assert strip == tree and strip[0].startswith("c")
        # open the oldest card level by level until the first turn shows its exact words
        node = page.locator("#tree > li").first
        while node.get_attribute("class").split()[1] == "card":
            node.locator(":scope > .node-head > button.toggle").click()
            children = node.locator(":scope > ul.children > li")
            children.first.wait_for()
            assert "folded" in children.first.get_attribute("class")  # dimmed in place
            node = children.first
        assert node.get_attribute("data-ref") == f"t{first.id}"
        assert node.locator("pre.verbatim").inner_text() == first.content
        screenshot(page, shots, "conversation")
        # search: the hit is opened in the tree, marked, and its words highlighted
        page.fill("#search", "ACC-55102")
        page.click("#search-form button")
        page.wait_for_selector("#hits[data-done='1']")
        hit = page.locator("li.node.hit[data-ref='t3']")  # the turn itself, opened inside its cards
        hit.wait_for()
        assert hit.locator("xpath=ancestor::li[contains(@class, 'card')]").count() >= 1
        assert hit.locator("mark").first.inner_text() == "ACC-55102"
        assert not shows(page.content(), SECRET)  # the viewer's reader holds no label
        screenshot(page, shots, "search", at="li.node.hit[data-ref='t3']")
    assert digest(replayed) == before


def test_context_view_shows_the_sections_and_the_slider_replays_turn_n(replayed, page, shots):
    before = digest(replayed)
    with served(replayed, reader=[]) as url:
        page.goto(f"{url}/conversation/{CONV}/context")
        page.wait_for_selector("#now-messages li")
        now = httpx.get(f"{url}/v1/view/conversations/{CONV}/context", timeout=60).json()
        assert page.locator("#now-messages > li").count() == len(now["messages"])
        for name, tokens in now["sections"].items():
            if tokens:
                assert page.locator(f"#now-bar [data-section='{name}']").inner_text() == f"{name} {tokens}"
        last = page.get_attribute("#slider", "max")
        page.wait_for_selector(f"#replay[data-seq='{last}']")
        # move the slider to turn 60: the replayed window after that turn
        page.eval_on_selector("#slider", "s => { s.value = '60'; s.dispatchEvent(new Event('input')); }")
        page.wait_for_selector("#replay[data-seq='60']")
        at = httpx.get(f"{url}/v1/view/conversations/{CONV}/at/60", timeout=60).json()
        assert page.inner_text("#slider-label").startswith(f"60 / {last} ")
        refs = page.eval_on_selector_all("#replay-strip .chip", "els => els.map(e => e.dataset.ref)")
        assert refs == [i["ref"] for i in at["items"]]
        assert page.locator("#replay-messages > li").count() == len(at["messages"])
        assert f"{at['total_tokens']} / {at['usable_tokens']} tokens" in page.inner_text("#replay")
        screenshot(page, shots, "context", full=True)
        # a budget the window does not fit: the view says a call would fold first, and folds nothing
        page.fill("#window-form input[name=budget]", "60")
        page.fill("#window-form input[name=output_reserve]", "0")
        page.click("#window-form button")
        page.wait_for_selector("#now-error")
        assert "would fold first" in page.inner_text("#now-error")
    assert digest(replayed) == before


def test_memories_view_shows_factors_chains_evictions_runs_and_protected_history(replayed, page, shots):
    before = digest(replayed)
    with served(replayed, reader=[]) as url:
        page.goto(f"{url}/memories?namespace={CONV}")
        page.wait_for_selector("#records tbody tr")
        rows = page.locator("#records tbody tr")
        assert rows.count() >= 8
        assert "ACC-55102" in page.inner_text("#records")
        first = rows.first.locator("td").all_inner_texts()
        importance, recency, access, score = (float(x) for x in first[6:10])
        assert score == pytest.approx(importance * recency * access, rel=2e-3, abs=2e-3)  # shown to 3 places
        assert "→" in page.inner_text("#chains") and "[retired]" in page.inner_text("#chains")
        assert "scratch: checking the invoice" in page.inner_text("#evictions")
        assert page.locator("#runs > li").count() >= 20
        assert "Dana Whitfield" in page.inner_text("#runs")  # a fact's source turn, verbatim
        protected = page.inner_text("#protected")
        assert "satisfied" in protected and "protect @" in protected and "protected_satisfied" in protected
        screenshot(page, shots, "memories")
        # the table at an earlier time: before the first supersession every fact was active
        page.fill("#at", "1772500000")
        page.click("#memories-form button")
        page.wait_for_function("document.querySelector('h2').textContent.includes('2026-03-03')")
        assert "retired" not in page.inner_text("#records")
    assert digest(replayed) == before


def test_growth_demo_plays_the_seed_session_turn_by_turn(tmp_path, page, shots):
    seed = build_seed_db(tmp_path / "seed.db")
    before = digest(seed)
    with served(seed, window=SEED_WINDOW, reader=None) as url:
        page.goto(f"{url}/conversation/ticket-42/growth?speed=150")
        page.wait_for_selector("#stage[data-seq='1']")
        assert page.eval_on_selector_all("#growth-strip .chip", "els => els.map(e => e.dataset.ref)") == ["t1"]
        page.click("#play")  # plays to the end (a state that stays; passing frames are not waited for)
        page.wait_for_selector("#stage[data-seq='10']")
        page.wait_for_selector("#play:text('play')")
        # the seed trace's final window: COLD c6, WARM c5 (the calculator), HOT t9 t10, "window now 32/40"
        assert page.eval_on_selector_all("#growth-strip .chip", "els => els.map(e => e.dataset.ref)") == [
            "c6", "c5", "t9", "t10"]
        assert "32 / 40 tokens" in page.inner_text("#stage")
        assert "folded into c5, c6" in page.inner_text("#step-label")
        tree = page.locator("#growth-tree > li[data-ref='c6']")
        assert tree.locator(":scope > ul > li.folded").evaluate_all("els => els.map(e => e.dataset.ref)") == [
            "c2", "c4"]  # the roll-up's children, dimmed, down to the turns
        assert "[2 earlier turns summarized]" in tree.inner_text()
        assert "Hi, can I still return the earbuds from order ORD-3300?" in tree.inner_text()  # t1, in c1 in c2
        screenshot(page, shots, "growth")
        page.eval_on_selector("#step", "s => { s.value = '4'; s.dispatchEvent(new Event('input')); }")
        page.wait_for_selector("#stage[data-seq='4']")  # the first fold: t1 and t2 into c1
        assert "folded into c1" in page.inner_text("#step-label")
        assert "29 / 40 tokens" in page.inner_text("#stage")  # the card counted as the demo counts it
        assert page.eval_on_selector_all("#growth-strip .chip", "els => els.map(e => e.dataset.ref)") == [
            "c1", "t3", "t4"]
        page.eval_on_selector("#step", "s => { s.value = '6'; s.dispatchEvent(new Event('input')); }")
        page.wait_for_selector("#stage[data-seq='6']")  # the chatter t3 t4 absorbed into c1: c2
        assert "folded into c2" in page.inner_text("#step-label")
        assert page.locator("#growth-strip .chip.new[data-ref='c2']").count() == 1
        assert page.eval_on_selector_all("#growth-strip .chip", "els => els.map(e => e.dataset.ref)") == [
            "c2", "t5", "t6"]
        # a narrower reader chosen on the page (the viewer runs as the owner here)
        assert "the owner" in page.inner_text("#who")
        page.fill("#window-form input[name=reader]", "none")
        page.click("#window-form button")
        page.wait_for_function("document.getElementById('who').textContent.includes('labels: none')")
        assert "reader=none" in page.url
    assert digest(seed) == before


def test_index_and_the_api_key_prompt(replayed, page, shots):
    keys = parse_keys({"keys": [{"name": "ops", "key": KEY, "namespaces": ["*"], "labels": ["secret"]}]}, "keys")
    with served(replayed, reader=[], keys=keys) as url:
        page.goto(url + "/")
        page.wait_for_selector("#key-form:not([hidden])")
        assert "needs an API key" in page.inner_text("#view")
        page.fill("#api-key", "not-the-key-0123456789")
        page.click("#key-form button")
        page.wait_for_function("document.getElementById('key-error').textContent.includes('unknown API key')")
        page.fill("#api-key", KEY)
        page.click("#key-form button")
        page.wait_for_selector("#conversations a")
        assert page.inner_text("#conversations a") == CONV
        assert "labels: none" in page.inner_text("#who") and "key ops" in page.inner_text("#who")
        screenshot(page, shots, "index")
        page.click("#conversations a")  # the key stays for the session: the next page loads without asking
        page.wait_for_selector("#strip .chip")
        assert page.is_hidden("#key-form")
