"""docker-compose.yml for users, checked without a Docker engine: valid against the Compose spec,
what it publishes and requires read from the parsed file, and what it runs (the service with a
token, the demo group planning through it) run here against a real broker."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.service import Service

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())

pytestmark = pytest.mark.integration


def test_compose_file_is_valid_against_the_compose_spec():
    checker = Path(sys.executable).with_name("check-jsonschema")
    result = subprocess.run([str(checker), "--builtin-schema", "vendor.compose-spec", str(ROOT / "docker-compose.yml")],
                            check=False, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_published_port_is_on_the_hosts_loopback_only():
    published = [(name, port) for name, service in COMPOSE["services"].items() for port in service.get("ports", [])]
    assert published == [("assignor", "127.0.0.1:8000:8000")]


def test_the_token_is_required_and_has_no_default():
    """``${ASSIGNOR_API_TOKEN:?...}``: compose stops with the message when it is unset; a
    ``:-default`` would put a known secret in front of the service."""
    tokens = {name: service["environment"]["ASSIGNOR_API_TOKEN"] for name, service in COMPOSE["services"].items()
              if "ASSIGNOR_API_TOKEN" in service.get("environment", {})}
    assert set(tokens) == {"assignor", "demo-consumers"}
    for value in tokens.values():
        assert re.fullmatch(r"\$\{ASSIGNOR_API_TOKEN:\?[^}]+\}", value), value


def test_the_image_runs_as_an_unprivileged_user_and_holds_what_its_commands_import():
    dockerfile = (ROOT / "Dockerfile").read_text()
    users = re.findall(r"^USER (\S+)$", dockerfile, re.MULTILINE)
    assert users and users[-1] not in ("0", "root"), users
    copied = set(re.findall(r"^COPY (\w+) \./\1$", dockerfile, re.MULTILINE))
    commands = [COMPOSE["services"]["demo-consumers"]["command"],
                json.loads(re.search(r"^CMD (\[.*\])$", dockerfile, re.MULTILINE).group(1))]
    for command in commands:
        module = command[command.index("-m") + 1]
        assert module.split(".")[0] in copied, (module, copied)


def test_the_service_as_the_image_starts_it_refuses_to_listen_without_a_token():
    env = {key: value for key, value in os.environ.items() if key != "ASSIGNOR_API_TOKEN"}
    result = subprocess.run([sys.executable, "-m", "api", "--host", "0.0.0.0", "--port", "0"], env=env, cwd=ROOT,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode != 0
    assert "ASSIGNOR_API_TOKEN" in result.stderr


def _lines(process: subprocess.Popen[str]) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def test_the_demo_group_plans_through_the_tokened_service(broker, tmp_path):
    """What compose starts, on a real broker: the service with a token and the demo's three
    members with the same token. Every partition of the demo topic ends up with exactly one
    member, each plan came from the service (no local fallback), and the registry lists the group."""
    token = "compose-" + "0123456789abcdef" * 2
    service = Service(tmp_path, token=token)
    env = {**os.environ, "BOOTSTRAP_SERVERS": broker.bootstrap, "ASSIGNOR_URL": service.url,
           "ASSIGNOR_API_TOKEN": token}
    demo = subprocess.Popen([sys.executable, "-m", "examples.demo_group", "--members", "3"], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
    latest: dict[str, tuple[list[int], int, int]] = {}
    pattern = re.compile(r"^(member-\d): generation -?\d+, partitions \[([\d, ]*)\] "
                         r"\(remote plans (\d+), local fallbacks (\d+)\)$")
    try:
        lines = _lines(demo)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1).rstrip("\n")
            except queue.Empty:
                continue
            if match := pattern.match(line):
                partitions = [int(p) for p in match.group(2).split(",") if p.strip()]
                latest[match.group(1)] = (partitions, int(match.group(3)), int(match.group(4)))
            owned = sorted(p for partitions, _, _ in latest.values() for p in partitions)
            if len(latest) == 3 and owned == list(range(12)):
                break
        owned = sorted(p for partitions, _, _ in latest.values() for p in partitions)
        assert len(latest) == 3 and owned == list(range(12)), latest
        assert all(len(partitions) == 4 for partitions, _, _ in latest.values()), latest
        assert sum(remote for _, remote, _ in latest.values()) >= 1
        assert all(fallbacks == 0 for _, _, fallbacks in latest.values()), latest
        request = urllib.request.Request(f"{service.url}/v1/groups", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            listed = json.load(reply)
        assert "demo-group" in json.dumps(listed)
    finally:
        demo.terminate()
        demo.wait(timeout=15)
        service.stop()
