"""End to end in a real headless Chromium: `streamlit run` the app on a free port over a tiny
index, ask in the chat box, open a citation, and keep a screenshot for people to look at.

Playwright drives Debian's chromium (never a downloaded browser); `make browser-deps`
installs it, and without it this test fails saying so rather than skipping silently.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Locator, expect, sync_playwright

from tests.app.test_streamlit_app import DOCS, QUESTION, REPO, build_index

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = REPO / "tests" / "artifacts"
STARTUP_SECONDS = 120
ANSWER_MS = 180_000

pytestmark = pytest.mark.browser


def corpus_text() -> str:
    """The documents as a reader sees them: link syntax reduced to its text, one space."""
    plain = (re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text) for text in DOCS.values())
    return " ".join(" ".join(text.split()) for text in plain)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"streamlit exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"streamlit not healthy after {STARTUP_SECONDS}s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def served_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("browser")
    index = build_index(root)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEORAG_", "NEO4J_"))}
    env.update(NEORAG_DATA_DIR=str(index.data_dir), NEORAG_BACKEND="embedded")
    log = root / "streamlit.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(REPO / "streamlit_app.py"),
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
                "--browser.gatherUsageStats",
                "false",
                "--client.toolbarMode",
                "minimal",
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(proc, url, log)
        yield url
    finally:
        proc.kill()
        proc.wait(timeout=30)


def count_sources(reply: Locator) -> int:
    """Citation expanders are labelled "[n] …"; the trace and subgraph ones are not."""
    labels = reply.get_by_test_id("stExpander").locator("summary").all_inner_texts()
    return sum(1 for label in labels if re.search(r"\[\d+\]", label))


def test_chat_in_chromium(served_app: str) -> None:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: run `make browser-deps` to install Debian's chromium",
            pytrace=False,
        )

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1200})
            page.goto(served_app)
            box = page.get_by_test_id("stChatInputTextArea")
            box.wait_for(timeout=ANSWER_MS)
            box.fill(QUESTION)
            box.press("Enter")

            reply = page.get_by_test_id("stChatMessage").nth(1)
            expect(reply.get_by_text("Sources")).to_be_visible(timeout=ANSWER_MS)
            expect(reply.get_by_test_id("stMarkdownContainer").first).to_contain_text("[1]")

            first = reply.get_by_test_id("stExpander").first
            summary = first.locator("summary")
            expect(summary).to_contain_text("[1]")
            summary.click()
            chunk_text = (
                first.get_by_test_id("stExpanderDetails").get_by_test_id("stMarkdownContainer").last
            )
            expect(chunk_text).to_be_visible()
            expect(chunk_text).to_have_text(re.compile(r"\w+ \w+ \w+ \w+"))  # rendered
            shown = " ".join(chunk_text.inner_text().split())
            assert len(shown) > 40 and shown[:40] in corpus_text(), shown

            page.get_by_test_id("stChatMessage").first.evaluate(
                "e => e.scrollIntoView({block: 'start'})"
            )
            page.wait_for_timeout(500)
            page.screenshot(path=str(ARTIFACTS / "chat.png"))

            # the subgraph picture renders (a DOT error would only show up here)
            reply.locator("summary", has_text="Retrieved subgraph").click()
            picture = reply.get_by_test_id("stGraphVizChart").locator("svg")
            expect(picture).to_be_visible(timeout=30_000)
            expect(picture.locator("g.node")).to_have_count(count_sources(reply))
            expect(reply.get_by_text(":param ids =>")).to_be_visible()
            picture.evaluate("e => e.scrollIntoView({block: 'center'})")
            page.wait_for_timeout(500)
            page.screenshot(path=str(ARTIFACTS / "subgraph.png"))
        finally:
            browser.close()
