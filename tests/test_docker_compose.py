"""docker-compose.yml and the Dockerfile, checked without a Docker engine.

The compose file must run the same Neo4j and GDS versions as the no-Docker setup
(ops/neo4j/pom.xml), so a drift in either place fails here. The healthcheck's shell line is
executed for real against a stand-in `cypher-shell`, which checks the `$$` escaping and the
version test that decides whether the app may start.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def pom_property(name: str) -> str:
    root = ET.parse(REPO / "ops" / "neo4j" / "pom.xml").getroot()
    node = root.find(f"m:properties/m:{name}", POM_NS)
    assert node is not None and node.text, f"pom.xml has no <{name}>"
    return node.text.strip()


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def neo4j(compose: dict[str, Any]) -> dict[str, Any]:
    return compose["services"]["neo4j"]


@pytest.fixture(scope="module")
def app(compose: dict[str, Any]) -> dict[str, Any]:
    return compose["services"]["app"]


def _default(value: str, variable: str) -> str:
    """The `${VAR:-default}` fallback compose uses when VAR is unset."""
    match = re.search(r"\$\{" + variable + r":-([^}]*)\}", value)
    assert match, f"{value!r} does not read ${{{variable}:-...}}"
    return match.group(1)


def test_neo4j_image_matches_pom(neo4j: dict[str, Any]) -> None:
    assert neo4j["image"] == f"neo4j:{pom_property('neo4j.version')}"


def test_gds_version_pinned_and_matches_pom(neo4j: dict[str, Any]) -> None:
    gds = pom_property("gds.version")
    assert neo4j["labels"]["dev.neorag.gds.version"] == gds
    env = neo4j["environment"]
    assert json.loads(env["NEO4J_PLUGINS"]) == ["graph-data-science"]
    major, minor, _ = gds.split(".")
    assert env["NEORAG_GDS_LINE"] == f"{major}.{minor}."


def allowed_procedures() -> list[str]:
    text = (REPO / "ops" / "neo4j" / "allowed-procedures").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


def test_same_procedures_and_csv_rule_as_the_assembled_server(neo4j: dict[str, Any]) -> None:
    env = neo4j["environment"]
    for setting in ("unrestricted", "allowlist"):
        assert env[f"NEO4J_dbms_security_procedures_{setting}"].split(",") == allowed_procedures()
    assert env["NEO4J_dbms_security_allow__csv__import__from__file__urls"] == "false"


def test_password_comes_from_environment(neo4j: dict[str, Any], app: dict[str, Any]) -> None:
    auth = neo4j["environment"]["NEO4J_AUTH"]
    assert auth.startswith("neo4j/${NEO4J_PASSWORD")
    # One default for both sides, or the app could never log in on a fresh setup.
    server_default = _default(auth, "NEO4J_PASSWORD")
    assert len(server_default) >= 8  # Neo4j 5 refuses shorter passwords
    assert _default(app["environment"]["NEO4J_PASSWORD"], "NEO4J_PASSWORD") == server_default


def test_ports_and_volume(neo4j: dict[str, Any], compose: dict[str, Any]) -> None:
    ports = {p.rsplit(":", 1)[-1] for p in neo4j["ports"]}
    assert {"7474", "7687"} <= ports
    mounts = {v.split(":")[1]: v.split(":")[0] for v in neo4j["volumes"]}
    assert mounts["/data"] in compose["volumes"]


def test_healthcheck_calls_gds_version(neo4j: dict[str, Any]) -> None:
    check = neo4j["healthcheck"]
    assert check["test"][0] == "CMD-SHELL"
    assert "cypher-shell" in check["test"][1]
    assert "gds.version()" in check["test"][1]


def _run_healthcheck(neo4j: dict[str, Any], tmp_path: Path, prints: str) -> int:
    """Run the healthcheck line as the container would, with `cypher-shell` replaced by a
    script that checks the credentials (from NEO4J_PASSWORD, never an argument) and prints
    `prints` as `--format plain` would."""
    stub = tmp_path / "cypher-shell"
    stub.write_text(
        "#!/bin/sh\n"
        '[ "$NEO4J_PASSWORD" = secret-pw ] || exit 1\n'
        'case "$*" in *secret-pw*) exit 1 ;; *"-u neo4j "*"gds.version()"*) ;; *) exit 1 ;; esac\n'
        f"printf '{prints}'\n"
    )
    stub.chmod(0o755)
    line = neo4j["healthcheck"]["test"][1].replace("$$", "$")  # compose's own unescaping
    env = {
        "PATH": f"{tmp_path}:{os.environ['PATH']}",
        "NEO4J_AUTH": "neo4j/secret-pw",
        "NEORAG_GDS_LINE": neo4j["environment"]["NEORAG_GDS_LINE"],
    }
    return subprocess.run(["sh", "-c", line], env=env, timeout=10).returncode


def test_healthcheck_accepts_only_the_pinned_gds_line(
    neo4j: dict[str, Any], tmp_path: Path
) -> None:
    gds = pom_property("gds.version")
    assert _run_healthcheck(neo4j, tmp_path, f'version\\n"{gds}"\\n') == 0
    assert _run_healthcheck(neo4j, tmp_path, 'version\\n"2.6.8"\\n') != 0
    assert _run_healthcheck(neo4j, tmp_path, "") != 0


def test_app_waits_for_healthy_neo4j(app: dict[str, Any]) -> None:
    assert app["depends_on"]["neo4j"]["condition"] == "service_healthy"
    env = app["environment"]
    assert env["NEORAG_BACKEND"] == "neo4j"
    assert env["NEO4J_URI"] == "bolt://neo4j:7687"
    assert any(p.endswith(":8501") for p in app["ports"])


def test_dockerfile_installs_the_lock_and_runs_streamlit(app: dict[str, Any]) -> None:
    context = REPO / (app["build"] if isinstance(app["build"], str) else app["build"]["context"])
    text = (context / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.11-slim$", text, re.M)
    lock = text.index("pip install -r requirements.lock")
    assert lock < text.index("pip install --no-deps .")
    cmd = json.loads(re.search(r"^CMD (\[.*\])", text, re.M | re.S).group(1).replace("\\\n", ""))
    assert cmd[:3] == ["streamlit", "run", "streamlit_app.py"]
    assert cmd[cmd.index("--server.address") + 1] == "0.0.0.0"
    copied = {src for line in re.findall(r"^COPY (.+)$", text, re.M) for src in line.split()[:-1]}
    # Every package pyproject installs, and the chat itself, are in the image.
    assert {"app", "graph", "ingest", "cypher", "streamlit_app.py", "requirements.lock"} <= copied


def test_the_api_service_serves_neorag_api_on_loopback(compose: dict[str, Any]) -> None:
    api = compose["services"]["api"]
    assert api["build"] == compose["services"]["app"]["build"]
    assert api["command"][:2] == ["neorag", "api"]
    assert api["ports"] == ["127.0.0.1:8000:8000"]
    assert api["environment"]["NEORAG_BACKEND"] == "neo4j"
    assert api["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert "/healthz" in " ".join(api["healthcheck"]["test"])
