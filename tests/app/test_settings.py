"""First-hour papercuts: a bad setting is one line naming the variable and what is allowed
(in the CLI, never a pydantic traceback); list settings read from plain text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from app.cli import app as cli
from app.settings import Settings, SettingsError, load_settings

REPO = Path(__file__).resolve().parents[2]


def neorag(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({"NEORAG_BACKEND": "mongo"}, ["NEORAG_BACKEND='mongo'", "'embedded' or 'neo4j'"]),
        ({"NEORAG_COLLECTION": "My Docs"}, ["NEORAG_COLLECTION='My Docs'", "a-z, 0-9"]),
        (
            {"NEORAG_RETRIEVAL__TIGRAG__GAMMA": "lots"},
            ["NEORAG_RETRIEVAL__TIGRAG__GAMMA='lots'", "integer"],
        ),
        ({"NEORAG_LLM__PROVIDER": "gpt"}, ["NEORAG_LLM__PROVIDER='gpt'", "'ollama'"]),
    ],
)
def test_a_bad_setting_is_one_line(env: dict[str, str], names: list[str], tmp_path: Path) -> None:
    done = CliRunner().invoke(cli, ["status"], env={"NEORAG_DATA_DIR": str(tmp_path), **env})
    assert done.exit_code == 2 and isinstance(done.exception, SystemExit)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: invalid setting ")
    for name in names:
        assert name in lines[0]
    assert "pydantic" not in done.stderr.lower()


def test_a_bad_setting_is_one_line_from_the_command_itself(tmp_path: Path) -> None:
    """The same through a real `neorag` process: nothing else reaches its stderr."""
    done = neorag("status", NEORAG_DATA_DIR=str(tmp_path), NEORAG_BACKEND="mongo")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: invalid setting "), done.stderr
    assert "NEORAG_BACKEND='mongo'" in lines[0]
    assert "Traceback" not in done.stderr


def test_passwords_are_never_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEORAG_BACKEND", "mongo")
    monkeypatch.setenv("NEO4J_PASSWORD", "s3cret-not-shown")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "s3cret" not in str(caught.value)


def test_allowed_roots_read_as_a_comma_separated_list(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("NEORAG_INGEST__ALLOWED_ROOTS", f"{tmp_path}/a, {tmp_path}/b")
    settings = load_settings()
    assert settings.ingest_roots() == [(tmp_path / "a").resolve(), (tmp_path / "b").resolve()]
    monkeypatch.delenv("NEORAG_INGEST__ALLOWED_ROOTS")
    default = Settings(data_dir=tmp_path / "data")
    assert default.ingest_roots() == [(tmp_path / "data" / "uploads").resolve(), Path.cwd()]


def test_collection_layout_is_one_folder_per_collection(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path, collection="team-docs")
    assert s.collection_dir == tmp_path / "embedded" / "collections" / "team-docs"
    assert s.uploads_dir == tmp_path / "uploads" / "team-docs"
    with pytest.raises(ValueError, match="invalid collection name"):
        s.for_collection("../escape")


def test_database_serving_ranks_tokens_in_gds() -> None:
    served = Settings(retrieval={"serving": "database"})
    assert served.algorithms.token_ppr == "gds"
    assert Settings().algorithms.token_ppr == "auto"
    with pytest.raises(ValidationError, match="token_ppr=local"):
        Settings(retrieval={"serving": "database"}, algorithms={"token_ppr": "local"})
