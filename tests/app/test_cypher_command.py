"""`neorag cypher` (and `serve`, and `--help` everywhere) through the real CLI.

Statements run against the real Neo4j from the environment. Anything written uses the
`NeoragMeta` label with a unique key in the `neo4j_store` fixture's collection, which its
clear() removes.
"""

from __future__ import annotations

import json
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from app import cli
from app.cypher_command import WRITE_HINT, parse_params
from graph.config import Neo4jConfig
from graph.errors import NeoragError

runner = CliRunner()


def neorag(*args: str) -> Result:
    return runner.invoke(cli.app, list(args))


def assert_one_line_error(result: Result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[0]


@pytest.fixture()
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No stray `.env` or state from the checkout leaks into a test."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEORAG_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


@pytest.fixture()
def neo4j_env(neo4j_config: Neo4jConfig, isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEORAG_BACKEND", "neo4j")
    monkeypatch.setenv("NEO4J_URI", neo4j_config.uri)
    monkeypatch.setenv("NEO4J_USER", neo4j_config.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_config.password.get_secret_value())
    monkeypatch.setenv("NEO4J_DATABASE", neo4j_config.database)


def probe_count(store: Any, key: str) -> int:
    records, _, _ = store.driver.execute_query(
        "MATCH (m:NeoragMeta {key: $key}) RETURN count(m) AS n", key=key
    )
    return int(records[0]["n"])


# ---- reading ---------------------------------------------------------------------------


def test_read_query_prints_a_table(neo4j_env: None) -> None:
    result = neorag("cypher", "UNWIND [1, 2, 3] AS x RETURN x, x * x AS square")
    assert result.exit_code == 0, result.output
    assert "square" in result.stdout
    assert re.search(r"│\s*3\s*│\s*9\s*│", result.stdout), result.stdout
    assert "3 rows" in result.stdout


def test_read_query_prints_json_rows(neo4j_env: None) -> None:
    result = neorag("cypher", "UNWIND [1, 2, 3] AS x RETURN x, x * x AS square", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [
        {"x": 1, "square": 1},
        {"x": 2, "square": 4},
        {"x": 3, "square": 9},
    ]


def test_parameters_are_json_when_valid_else_strings(neo4j_env: None) -> None:
    result = neorag(
        "cypher",
        "RETURN $n AS n, $names AS names, $quoted AS quoted, $text AS text, $flag AS flag",
        "--param",
        "n=42",
        "-p",
        'names=["a", "b"]',
        "-p",
        'quoted="7"',
        "-p",
        "text=guide/ingest.md",
        "-p",
        "flag=true",
        "--json",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [
        {"n": 42, "names": ["a", "b"], "quoted": "7", "text": "guide/ingest.md", "flag": True}
    ]


def test_a_parameter_value_is_never_cypher(neo4j_env: None) -> None:
    sneaky = "x' }) DETACH DELETE n //"
    result = neorag("cypher", "RETURN $v AS v", "-p", f"v={sneaky}", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"v": sneaky}]


def test_missing_parameter_and_bad_syntax_are_one_line(neo4j_env: None) -> None:
    assert_one_line_error(neorag("cypher", "RETURN $absent"), "absent", "--param")
    assert_one_line_error(neorag("cypher", "MATCH (n RETURN n"), "SyntaxError")


def test_timeout_stops_a_long_statement(neo4j_env: None) -> None:
    result = neorag(
        "cypher",
        "UNWIND range(1, 1000000000) AS x WITH x WHERE x < 0 RETURN count(*)",
        "--timeout",
        "0.3",
    )
    assert_one_line_error(result, "0.3s", "--timeout")


def test_row_cap_and_timeout_come_from_settings_and_flags_override(
    neo4j_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEORAG_CYPHER__MAX_ROWS", "4")
    monkeypatch.setenv("NEORAG_CYPHER__TIMEOUT_SECONDS", "0.3")
    capped = neorag("cypher", "UNWIND range(1, 10) AS x RETURN x", "--json")
    assert capped.exit_code == 0, capped.output
    assert [r["x"] for r in json.loads(capped.stdout)] == [1, 2, 3, 4]
    assert "stopped at 4" in capped.stderr and "--max-rows" in capped.stderr
    wider = neorag("cypher", "UNWIND range(1, 10) AS x RETURN x", "--json", "--max-rows", "6")
    assert len(json.loads(wider.stdout)) == 6
    slow = "UNWIND range(1, 1000000000) AS x WITH x WHERE x < 0 RETURN count(*)"
    assert_one_line_error(neorag("cypher", slow), "0.3s", "--timeout")
    assert_one_line_error(neorag("cypher", slow, "--timeout", "0.2"), "0.2s", "--timeout")


# ---- writing ---------------------------------------------------------------------------


def test_write_without_flag_is_refused_and_writes_nothing(
    neo4j_env: None, neo4j_store: Any
) -> None:
    key = f"cli-probe-{uuid.uuid4().hex}"
    result = neorag("cypher", "CREATE (:NeoragMeta {key: $key, value: 'x'})", "-p", f"key={key}")
    assert_one_line_error(result, "a write (CREATE)", WRITE_HINT)
    # Hidden inside a subquery it is refused all the same: the plan shows it, not a regex.
    hidden = "CALL () { CREATE (m:NeoragMeta {key: $key}) RETURN m } RETURN count(m)"
    assert_one_line_error(neorag("cypher", hidden, "-p", f"key={key}"), "CREATE", WRITE_HINT)
    assert probe_count(neo4j_store, key) == 0


def test_gds_catalog_changes_and_load_csv_are_refused_in_one_line(neo4j_env: None) -> None:
    drop = neorag("cypher", "CALL gds.graph.drop('neorag_tokens_x', false)")
    assert_one_line_error(drop, "gds.graph.drop", "drops a GDS projection", WRITE_HINT)
    load = neorag("cypher", "LOAD CSV FROM 'http://127.0.0.1:9/x.csv' AS row RETURN row")
    assert_one_line_error(load, "LOAD CSV", WRITE_HINT)


def test_write_with_flag_writes(neo4j_env: None, neo4j_store: Any) -> None:
    key = f"cli-probe-{uuid.uuid4().hex}"
    result = neorag(
        "cypher",
        "CREATE (:NeoragMeta {collection: $c, key: $key, value: 'x'})",
        "-p",
        f"key={key}",
        "-p",
        f"c={neo4j_store.collection}",
        "--write",
    )
    assert result.exit_code == 0, result.output
    assert "nodes created 1" in result.stdout
    assert probe_count(neo4j_store, key) == 1

    read = neorag(
        "cypher", "MATCH (m:NeoragMeta {key: $key}) RETURN m", "-p", f"key={key}", "--json"
    )
    assert read.exit_code == 0, read.output
    [row] = json.loads(read.stdout)
    assert row["m"]["labels"] == ["NeoragMeta"]
    assert row["m"]["properties"] == {
        "collection": neo4j_store.collection,
        "key": key,
        "value": "x",
    }


# ---- without Neo4j ---------------------------------------------------------------------


def test_embedded_backend_explains_what_is_needed(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEORAG_BACKEND", "embedded")
    assert_one_line_error(neorag("cypher", "RETURN 1"), "Neo4j backend", "NEORAG_BACKEND=neo4j")
    assert_one_line_error(neorag("cypher", "RETURN 1", "--backend", "embedded"), "Neo4j backend")


@pytest.mark.parametrize("item", ["novalue", "=1", "bad name=1", "a-b=2"])
def test_malformed_param_is_refused(item: str) -> None:
    with pytest.raises(NeoragError, match="name=value"):
        parse_params([item])


def test_duplicate_param_is_refused() -> None:
    with pytest.raises(NeoragError, match="twice"):
        parse_params(["a=1", "a=2"])


def test_help_works_on_every_command() -> None:
    result = neorag("--help")
    assert result.exit_code == 0
    names = [c.name or c.callback.__name__ for c in cli.app.registered_commands]
    assert {"ingest", "status", "ask", "eval", "cypher", "serve"} <= set(names)
    for name in names:
        result = neorag(name, "--help")
        assert result.exit_code == 0, f"{name} --help: {result.output}"
        assert "Usage" in result.output


def test_ask_on_an_empty_index_is_one_line(isolated: Path) -> None:
    """Before any ingest, `ask` says what to run instead of failing inside a retriever."""
    result = neorag("ask", "who directed it?")
    assert_one_line_error(result, "index is empty", "neorag ingest")


def test_serve_binds_loopback_unless_told(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chat has no login: without `--address` it listens on 127.0.0.1 only."""
    (isolated / "streamlit_app.py").write_text("")
    calls: list[list[str]] = []
    monkeypatch.setattr(cli.os, "execv", lambda path, argv: calls.append([path, *argv]))
    assert neorag("serve").exit_code == 0
    [[_, *argv]] = calls
    assert argv[argv.index("--server.address") + 1] == "127.0.0.1"


def test_serve_execs_streamlit_on_the_chosen_port(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (isolated / "streamlit_app.py").write_text("")  # used when the checkout has none yet
    calls: list[list[str]] = []
    monkeypatch.setattr(cli.os, "execv", lambda path, argv: calls.append([path, *argv]))
    result = neorag("serve", "--port", "8612", "--address", "0.0.0.0")
    assert result.exit_code == 0, result.output
    [[path, *argv]] = calls
    assert path == sys.executable and argv[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert Path(argv[4]).name == "streamlit_app.py" and Path(argv[4]).is_file()
    assert argv[argv.index("--server.port") + 1] == "8612"
    assert argv[argv.index("--server.address") + 1] == "0.0.0.0"
