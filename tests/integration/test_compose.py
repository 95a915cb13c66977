"""docker-compose.yml for users: valid against the Compose spec (no Docker engine runs here)."""

import importlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_compose_file_is_valid_against_the_compose_spec():
    checker = Path(sys.executable).with_name("check-jsonschema")
    result = subprocess.run([str(checker), "--builtin-schema", "vendor.compose-spec", str(ROOT / "docker-compose.yml")],
                            check=False, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_publishes_the_service_on_loopback_only():
    text = (ROOT / "docker-compose.yml").read_text()
    assert '"127.0.0.1:8000:8000"' in text
    dockerfile = (ROOT / "Dockerfile").read_text()
    for package in ("assignor", "api", "examples"):
        assert f"COPY {package} ./{package}" in dockerfile


def test_demo_group_imports():
    module = importlib.import_module("examples.demo_group")
    assert module.TOPIC == "demo-orders"
