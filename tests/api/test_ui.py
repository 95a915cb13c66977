"""The web page in headless Chromium (Debian's, driven by playwright): load, run a what-if,
read the table and the heat map, keep a screenshot in var/test-artifacts/."""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from assignor.protocol import Subscription, encode_subscription
from assignor.strategies import REGISTRY
from assignor.whatif import consumer_member_id
from tests.service import Service

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(os.environ.get("ASSIGNOR_TEST_ARTIFACTS",
                                Path(__file__).resolve().parents[2] / "var" / "test-artifacts"))
# Headless, and nothing that reaches beyond this machine.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    running = Service(tmp_path_factory.mktemp("ui"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser, service):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    # The page runs under its Content-Security-Policy: anything it blocks is an error here.
    opened.on("console", lambda message: errors.append(message.text)
              if "Content Security Policy" in message.text else None)
    opened.goto(service.url + "/")
    yield opened
    context.close()
    assert not errors, errors


def test_whatif_shows_the_table_heat_map_and_moves(page):
    assert not page.locator("#heat-legend").is_visible()  # (a legend of nothing, before any run)
    page.click("#run")
    page.wait_for_selector("#summary tbody tr[data-strategy='sticky']")
    rows = page.locator("#summary tbody tr")
    assert rows.count() == len(REGISTRY)  # every strategy, the broker's (KIP-848) included
    sticky = [page.locator("#summary tbody tr[data-strategy='sticky'] td").nth(i).inner_text() for i in range(9)]
    # The example: 3 members with 4 partitions each; c1 leaves, then c9 joins.
    assert sticky[0] == "sticky" and sticky[1] == "2" and sticky[6] == "0"  # two event steps, balanced
    cards = page.locator("#heatmaps section[data-strategy]")
    assert cards.count() == len(REGISTRY)
    heat = page.locator("#heatmaps section[data-strategy='sticky'] table.heat")
    members = [heat.locator("tr").nth(i).locator("td").first.inner_text() for i in range(1, 4)]
    assert members == ["c2", "c3", "c9"]
    assert heat.locator("td.moved").count() >= 1  # the joiner gained partitions
    assert page.locator("#chart svg rect[data-series='moved']").count() == len(REGISTRY)
    assert page.locator("#heat-legend").is_visible()
    # Titles wrap at an event's separators, not inside a name ("payment / s" at 1,400 px).
    title = page.locator("#heatmaps section[data-strategy='cooperative-sticky'] h2")
    assert title.locator("wbr").count() >= 3
    assert page.evaluate("getComputedStyle(document.querySelector('#heatmaps h2')).overflowWrap") == "break-word"
    # Java's strategies side by side with ours, and what switching would change.
    pairs = page.locator("#comparisons tbody tr")
    assert pairs.count() == 2 and page.locator("#comparison-card").is_visible()
    assert pairs.first.locator("td").first.inner_text() == "java-sticky vs sticky"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-whatif.png"), full_page=True)


def test_a_migration_rehearsal_on_the_page(page):
    """The example group moved to KIP-848's consumer protocol: the steps as the broker takes
    them, then per later event what staying on each classic strategy checked would cost."""
    classic = [name for name, s in REGISTRY.items() if s.protocol.classic]
    targets = [o.get_attribute("value") for o in page.locator("#migrate option").all()][1:]
    assert targets == [name for name, s in REGISTRY.items() if not s.protocol.classic]
    for box in page.locator("#strategy-checks input").all():
        if box.get_attribute("value") != "cooperative-sticky" and box.get_attribute("value") != "range":
            box.uncheck()
    page.select_option("#migrate", "kip848-uniform")
    page.click("#run")
    page.wait_for_selector("#migration-card:not([hidden])")
    first = "cooperative-sticky" if classic.index("cooperative-sticky") < classic.index("range") else "range"
    assert page.locator("#migration-title").inner_text().startswith(f"Migration: {first} today")
    steps = [r.get_attribute("data-step") for r in page.locator("#migration-steps tbody tr").all()]
    # today, leave and rejoin per member (c1, c2, c3: c1's rejoin converts the group), then
    # member_leave:c1 and the join.
    assert steps[:3] == ["current", "restart c1: leave (classic)",
                         f"restart c1: rejoin as {consumer_member_id('c1')}, converting to kip848-uniform"]
    assert len(steps) == 1 + 2 * 3 + 2 and steps[-2:] == ["member_leave:c1", "member_join:c9:orders,payments"]
    saved = page.locator("#migration-saved tbody tr")
    assert saved.count() == 2 * 2  # two later events x two classic strategies
    assert {r.get_attribute("data-classic") for r in saved.all()} == {"cooperative-sticky", "range"}
    assert "3 restarts" in page.locator("#migration-upgrade").inner_text()
    assert "Against the optimum" in page.locator("#migration-optimum").inner_text()
    assert not page.locator("#summary-card").is_visible() and not page.locator("#heat-legend").is_visible()
    # At 1,400 px both tables fit their card (the later events' table was 36 px wider than it).
    widths = page.evaluate("[...document.querySelectorAll('#migration-card .scroll')]"
                           ".map((e) => [e.scrollWidth, e.clientWidth])")
    assert all(scroll <= client for scroll, client in widths), widths
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-migration.png"), full_page=True)
    # Only consumer-protocol strategies checked: nothing to compare against, said on the page.
    for box in page.locator("#strategy-checks input").all():
        box.set_checked(box.get_attribute("data-classic") == "false")
    page.click("#run")
    assert page.locator("#error").inner_text() == "Pick the classic strategy the group runs today."
    assert not page.locator("#migration-card").is_visible()
    # Back to a plain what-if: the summary returns.
    page.select_option("#migrate", "")
    page.click("#run")
    page.wait_for_selector("#summary tbody tr[data-strategy='kip848-uniform']")
    assert page.locator("#summary-card").is_visible() and not page.locator("#migration-card").is_visible()


def test_restarts_quicker_than_a_rebalance_on_the_page(page):
    """Members away a tenth of a second: each restart of the upgrade is one step, its member back
    before the rebalance its leave starts, and nothing moves."""
    for box in page.locator("#strategy-checks input").all():
        box.set_checked(box.get_attribute("value") == "cooperative-sticky")
    page.fill("#events", "")
    page.fill("#restart-seconds", "0.1")
    page.select_option("#migrate", "kip848-uniform")
    page.click("#run")
    page.wait_for_selector("#migration-card:not([hidden])")
    steps = [r.get_attribute("data-step") for r in page.locator("#migration-steps tbody tr").all()]
    assert len(steps) == 1 + 3 and all("back" in s and "after 0.1 s" in s for s in steps[1:]), steps
    assert "0 partitions moved" in page.locator("#migration-upgrade").inner_text()


def test_bad_group_json_is_reported_on_the_page(page):
    page.fill("#group", "{ not json")
    page.click("#run")
    assert "does not parse" in page.locator("#error").inner_text()
    page.fill("#group", json.dumps({"topics": {"t": -2}, "members": []}))
    page.click("#run")
    expect(page.locator("#error")).to_contain_text("422")  # (polled by playwright: the page's policy forbids eval)
    assert "partition count" in page.locator("#error").inner_text()


def test_a_registered_group_can_be_picked(page, service):
    metadata = base64.b64encode(encode_subscription(Subscription(["orders"]))).decode()
    body = {"protocol": "sticky", "generation": 5, "topics": {"orders": {"partitions": 4}},
            "members": [{"member_id": "m1", "metadata_b64": metadata}, {"member_id": "m2", "metadata_b64": metadata}]}
    request = urllib.request.Request(f"{service.url}/v1/groups/payments-app/sync", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        assert reply.status == 200
    page.click("#load-groups")
    page.wait_for_selector("#source option[value='registry:payments-app']", state="attached")
    page.select_option("#source", "registry:payments-app")
    page.fill("#events", "member_leave:m1")
    page.click("#run")
    page.wait_for_selector("#heatmaps section[data-strategy='sticky']")
    heat = page.locator("#heatmaps section[data-strategy='sticky'] table.heat")
    assert heat.locator("tr").nth(1).locator("td").first.inner_text() == "m2"


def test_live_groups_of_the_services_clusters_can_be_picked(browser, broker, tmp_path):
    """With ``ASSIGNOR_CLUSTERS`` naming the test broker (and a cluster that cannot be reached):
    "Live groups" lists each consumer group of each cluster by its summary (protocol, members,
    state: no member is decoded to list them), shows the snapshot of the one picked, read when
    picked, and a run reads the group again by its cluster and id (one that holds a '/'); the
    rehearsal of its move starts from the strategy it runs; the cluster that cannot be reached
    is said so. A service without clusters says how to name them."""
    import asyncio
    import uuid
    from concurrent.futures import ThreadPoolExecutor

    from bench.rebalance import LibrdkafkaMember, create_topic, settle
    from tests.ownership import Timeline

    def run(coroutine):  # (playwright's sync API runs an event loop in this thread)
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coroutine).result()

    topic = run(create_topic(broker.bootstrap, 4))
    name = f"ui-live-{uuid.uuid4().hex[:8]}"
    group = f"team/{name}"  # (a '/' in a group id: the page sends it as %2F)
    members = [LibrdkafkaMember(f"{name}.m{i}", broker.bootstrap, group, topic, Timeline()) for i in range(2)]
    clusters = {"local": {"bootstrap.servers": broker.bootstrap},
                "gone": {"bootstrap.servers": "127.0.0.1:1", "request.timeout.ms": "2000"}}
    service = Service(tmp_path, env={"ASSIGNOR_CLUSTERS": json.dumps(clusters)})
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        for member in members:
            run(member.start())
        run(settle(members, 4))
        page = context.new_page()
        page.goto(service.url + "/")
        page.click("#load-live")
        value = "live:" + json.dumps(["local", group], separators=(",", ":"))
        page.wait_for_selector(f"#source option[value='{value}']", state="attached")
        assert page.locator(f"#source option[value='{value}']").inner_text() == \
            f"Live: local / {group} (classic, 2 members, Stable)"
        expect(page.locator("#error")).to_contain_text("503: cluster gone: cannot connect to 127.0.0.1:1")
        page.select_option("#source", value)  # (listed as a summary: the group is read once picked)
        expect(page.locator("#group")).to_have_value(re.compile(r"^\{"))
        shown = json.loads(page.locator("#group").input_value())
        assert shown["group_id"] == group
        assert sorted(p for m in shown["members"] for _t, p in m["owned"]) == [0, 1, 2, 3]
        leaving = shown["members"][0]["id"]
        page.fill("#events", f"member_leave:{leaving}")
        for box in page.locator("#strategy-checks input").all():
            box.uncheck()
        page.check("#strategy-checks input[value='sticky']")
        page.click("#run")
        page.wait_for_selector("#heatmaps section[data-strategy='sticky']")
        heat = page.locator("#heatmaps section[data-strategy='sticky'] table.heat")
        assert heat.locator("tr").nth(1).locator("td").first.inner_text() == shown["members"][1]["id"]
        assert page.locator("#error").inner_text() == ""
        # Its move to the consumer protocol, rehearsed from the strategy it runs (Java's for the
        # protocol its librdkafka members chose), whichever classic strategy is checked first.
        assert shown["assignor"] == "cooperative-sticky"
        page.uncheck("#strategy-checks input[value='sticky']")
        page.check("#strategy-checks input[value='cooperative-sticky']")
        page.select_option("#migrate", "kip848-uniform")
        page.click("#run")
        expect(page.locator("#migration-title")).to_have_text(
            "Migration: java-cooperative-sticky today, then KIP-848's consumer protocol with kip848-uniform")
    finally:
        context.close()
        service.stop()
        for member in members:
            run(member.stop())
    (tmp_path / "none").mkdir()
    without = Service(tmp_path / "none")
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(without.url + "/")
        page.click("#load-live")
        expect(page.locator("#error")).to_have_text(
            "No clusters configured: the service reads live groups of the clusters in ASSIGNOR_CLUSTERS.")
    finally:
        context.close()
        without.stop()


def test_no_strategy_picked_is_said_and_runs_nothing(page):
    """Unchecking every strategy silently ran all six (an empty list means "all" to the API)."""
    for box in page.locator("#strategy-checks input").all():
        box.uncheck()
    page.click("#run")
    assert page.locator("#error").inner_text() == "Pick at least one strategy."
    assert page.locator("#summary tbody tr").count() == 0


def test_a_failed_run_leaves_no_results_of_an_earlier_one(page):
    page.click("#run")
    page.wait_for_selector("#summary tbody tr[data-strategy='sticky']")
    page.fill("#group", json.dumps({"topics": {"t": -2}, "members": []}))
    page.click("#run")
    expect(page.locator("#error")).to_contain_text("422")  # (polled by playwright: the page's policy forbids eval)
    assert page.locator("#summary tbody tr").count() == 0
    assert page.locator("#heatmaps section").count() == 0 and not page.locator("#comparison-card").is_visible()
    assert not page.locator("#heat-legend").is_visible()  # (no legend left beside an error)


@pytest.mark.parametrize("width", [420, 1280])
def test_the_page_fits_the_screen(browser, service, width):
    """At a 420 px viewport the page was 1,182 px wide: the two columns and the wide tables did
    not reflow. Now the page is never wider than its viewport (tables scroll in their cards)."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    opened = context.new_page()
    icon = opened.request.get(service.url + "/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"] == "image/svg+xml"
    opened.goto(service.url + "/")
    opened.click("#run")
    opened.wait_for_selector("#heatmaps section[data-strategy='sticky']")
    assert opened.evaluate("document.documentElement.scrollWidth") <= width
    inputs, results = (opened.locator(selector).bounding_box() for selector in ("#inputs", "#summary"))
    # Narrow: the inputs above the results; wide: side by side.
    assert (inputs["y"] + inputs["height"] <= results["y"]) == (width < 860)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    opened.screenshot(path=str(ARTIFACTS / f"ui-{width}px.png"), full_page=True)
    context.close()


@pytest.mark.parametrize(("path", "rendered"), [("/docs", ".swagger-ui .info .title"),
                                                ("/redoc", ".api-info h1")])
def test_the_api_docs_render_offline(browser, service, path, rendered):
    """``/docs`` and ``/redoc`` loaded Swagger UI and ReDoc from a CDN and rendered blank
    offline; their assets now come with the package. Every request off this machine fails, and
    none is for code or style (ReDoc's footer asks for its maker's logo, an image)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    left: list[str] = []

    def local_only(route) -> None:
        if route.request.url.startswith(service.url):
            route.continue_()
        else:
            left.append((route.request.resource_type, route.request.url))
            route.abort()

    context.route("**/*", local_only)
    opened = context.new_page()
    blocked: list[str] = []
    opened.on("console", lambda message: blocked.append(message.text)
              if "Content Security Policy" in message.text else None)
    opened.goto(service.url + path)
    opened.wait_for_selector(rendered, timeout=20_000)
    assert "kafka-sticky-assignor" in opened.locator(rendered).first.inner_text()
    assert all(kind == "image" for kind, _url in left), left
    if path == "/docs":  # the bearer scheme is declared, so Swagger UI can send the token
        assert opened.locator("button.authorize").count() == 1
    # The docs run under their own policy; it blocks only ReDoc's logo from its maker's site.
    assert all(message.startswith("Loading the image 'https://") for message in blocked), blocked
    context.close()


def test_a_page_on_another_origin_cannot_write_the_registry(browser, service):
    """A page on another origin wrote a group into the registry with a "simple" request
    (``mode: "no-cors"``, ``text/plain``). Tried again from a page served on another origin,
    both ways: the simple request is refused (415, and its answer unreadable to that page), the
    JSON one never leaves the browser (its CORS preflight is not granted). Nothing is written."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    body = json.dumps({"protocol": "sticky", "generation": 1, "topics": {"t": {"partitions": 2}},
                       "members": [{"member_id": "a", "metadata_b64": base64.b64encode(
                           encode_subscription(Subscription(["t"]))).decode()}]})
    script = f"""
      const body = {json.dumps(body)};
      window.done = Promise.allSettled([
        fetch("{service.url}/v1/groups/cross-simple/sync",
              {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}}, body}}),
        fetch("{service.url}/v1/groups/cross-json/sync",
              {{method: "POST", headers: {{"Content-Type": "application/json"}}, body}}),
        fetch("{service.url}/v1/groups/cross-form/sync",
              {{method: "POST", mode: "no-cors", body: new URLSearchParams({{x: body}})}}),
      ]).then(results => results.map(r => r.status + (r.reason ? ":" + r.reason : "")));"""

    class Attacker(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            page = f"<!doctype html><script>{script}</script>".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    elsewhere = ThreadingHTTPServer(("127.0.0.2", 0), Attacker)
    threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        opened = context.new_page()
        opened.goto(f"http://127.0.0.2:{elsewhere.server_address[1]}/")
        # The requests went (the simple ones reach the service, which refuses them; their
        # answers, opaque anyway, are also withheld by Cross-Origin-Resource-Policy).
        assert len(opened.evaluate("window.done")) == 3
    finally:
        context.close()
        elsewhere.shutdown()
    for group in ("cross-simple", "cross-json", "cross-form"):
        try:
            urllib.request.urlopen(f"{service.url}/v1/groups/{group}", timeout=5)
            raise AssertionError(f"{group} was written")
        except urllib.error.HTTPError as error:
            assert error.code == 404
