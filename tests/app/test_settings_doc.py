"""docs/configuration.md is the render of the settings model: regenerate it with
`make docs` (python -m app.settings_doc > docs/configuration.md) when this fails."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args, get_origin

from app import settings_doc
from app.settings import Settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_the_committed_page_is_the_render_of_the_model() -> None:
    assert DOC.read_text(encoding="utf-8") == settings_doc.render(), (
        "docs/configuration.md is out of date: run `make docs` and commit the result"
    )


def test_every_setting_has_one_description() -> None:
    rows = list(settings_doc.rows())
    missing = [r.key for r in rows if not settings_doc.description(r)]
    assert not missing, f"add description= to these fields: {missing}"
    keys = {r.key for r in rows}
    unknown = sorted(set(settings_doc.NOTES) - keys)
    assert not unknown, f"NOTES names fields that do not exist: {unknown}"
    twice = sorted(r.key for r in rows if r.field.description and r.key in settings_doc.NOTES)
    assert not twice, f"these fields have their own description; drop their NOTES: {twice}"


def _another_value(row: settings_doc.Row) -> tuple[str, object] | None:
    """A valid value other than the default, as the environment gives it and as read."""
    field = row.field
    kind = field.annotation
    default = field.get_default(call_default_factory=True)
    if settings_doc.is_secret(field) or kind in (tuple, dict):
        return None
    if get_origin(kind) is Literal:
        other = next(a for a in get_args(kind) if a != default)
        return str(other), other
    if kind is bool:
        return str(not default).lower(), not default
    if kind == Path | None:
        return "/tmp/probe", Path("/tmp/probe")
    if kind in (int, float) or default is None:
        step = 1 if kind is int or default is None else 0.01
        upper = [getattr(m, "le", None) or getattr(m, "lt", None) for m in field.metadata]
        base = 100 if default is None else default
        value = (
            base - step if any(u is not None and base + step > u for u in upper) else base + step
        )
        value = round(value, 6)
        return str(value), value
    if kind is str:
        return "probe", "probe"
    if kind is Path:
        return "/tmp/probe", Path("/tmp/probe")
    if get_origin(kind) is list and settings_doc._comma_separated(field):
        inner = get_args(kind)[0]
        return "/tmp/a,/tmp/b", [inner("/tmp/a"), inner("/tmp/b")]
    return None


def test_every_environment_variable_is_the_one_the_model_reads(monkeypatch) -> None:
    """Each rendered variable, set to another valid value, changes exactly that field."""
    for row in settings_doc.rows():  # the caller's own settings (make test sets NEO4J_URI)
        for name in settings_doc.env_names(row):
            monkeypatch.delenv(name, raising=False)
    probed = 0
    for row in settings_doc.rows():
        given = _another_value(row)
        if given is None:
            continue
        text, expected = given
        for name in settings_doc.env_names(row):
            with monkeypatch.context() as env:
                env.setenv(name, text)
                value: object = Settings(_env_file=None)
                for part in (*row.path, row.name):
                    value = getattr(value, part)
                assert value == expected, (name, value, expected)
                probed += 1
    assert probed > 80


def test_secrets_never_render_a_value(monkeypatch) -> None:
    monkeypatch.setenv("NEO4J_PASSWORD", "hunter2-hunter2")
    monkeypatch.setenv("NEORAG_API__KEYS", "sekrit-key-1:read")
    monkeypatch.setenv("NEORAG_LLM__API_KEY", "sk-not-for-docs")
    text = settings_doc.render()
    for value in ("hunter2-hunter2", "sekrit-key-1", "sk-not-for-docs"):
        assert value not in text
    secrets = [r for r in settings_doc.rows() if settings_doc.is_secret(r.field)]
    assert {r.key for r in secrets} >= {
        "Settings.neo4j_password",
        "ApiConfig.keys",
        "LlmConfig.api_key",
    }
    assert all(settings_doc.default_cell(r.field) == settings_doc.SECRET for r in secrets)
