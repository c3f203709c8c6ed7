"""README, The Neo4j backend: "Every Cypher statement the code runs is a named file in
`cypher/`, so what the app does can be run by hand."

The Python source of app/, graph/ and ingest/ is parsed with `ast` and every string it
builds (constants, f-strings with `{}` for their holes, `+` chains of strings) is checked
for the shape of a Cypher statement. Docstrings are not checked: they are never run. What
remains and is legitimately not a statement of the code's own is named in ALLOWED or
ALLOWED_TABLES, with its reason; an entry that no longer matches anything fails too, so
the list stays exact. The detector itself is checked against every file in cypher/ (it
must recognise each of them) and against strings it must not take for Cypher (the embedded
store's SQL, single keywords, prose), so the scan cannot pass by recognising nothing.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import cypher

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "graph", "ingest")

# Clauses a statement may start with.
_CLAUSE = (
    r"OPTIONAL\s+MATCH|MATCH|MERGE|CREATE|UNWIND|RETURN|WITH|CALL|SHOW|DROP|EXPLAIN|"
    r"PROFILE|LOAD\s+CSV|FOREACH|DETACH\s+DELETE|USE|CYPHER|TERMINATE|ALTER|GRANT|REVOKE|"
    r"DENY|START|STOP"
)
# Written in capitals, a clause followed by anything is taken for a statement ("RETURN 1",
# "SHOW DATABASES") ...
_UPPER_START = re.compile(rf"^\s*(?:{_CLAUSE})\s+\S")
# ... in any case (Cypher allows it), only with something in its body that only Cypher has,
# so prose starting with "Create" or "Return" is not.
_START = re.compile(rf"^\s*(?:{_CLAUSE})\b", re.IGNORECASE)
_BODY = [
    re.compile(r"\(\s*\w*\s*:\s*`?[A-Za-z_]"),  # (n:Label  (:Label
    re.compile(r"\(\s*\w+\s*\{"),  # (n {key: ...})
    re.compile(r"-\[|\]-|\)\s*<?-+>?\s*\("),  # -[r:T]->  (a)--(b)
    re.compile(r"\$[A-Za-z_]\w*"),  # $parameter
    re.compile(r"\b(?:gds|db|dbms|apoc|genai)\.[A-Za-z_][\w.]*\s*\("),  # procedure call
    re.compile(
        r"\(\s*[A-Za-z_]\w*\s*\)\s*(?:return|where|set|delete|detach|remove|with|-|<)", re.I
    ),
]
# A statement fragment anywhere in a string: a clause (in capitals) applied to a pattern, a
# procedure, a parameter or a subquery.
_FRAGMENT = re.compile(
    r"\b(?:OPTIONAL\s+MATCH|MATCH|MERGE|CREATE)\s*\(|"
    r"\bDETACH\s+DELETE\s+\w|"
    r"\bCALL\s+(?:(?:gds|db|dbms|apoc)\.|\(|\{)|"
    r"\bUNWIND\s+\$|"
    r"\bLOAD\s+CSV\s+(?:WITH\s+HEADERS\s+)?FROM\b"
)


def looks_like_cypher(text: str) -> bool:
    if _UPPER_START.match(text) or _FRAGMENT.search(text):
        return True
    return bool(_START.match(text)) and any(p.search(text) for p in _BODY)


# What the scan finds that is not a statement of the code's own, each with its reason; an
# entry that matches nothing any more fails the test, so the list stays exact.
# Whole tables, by the module-level name they are assigned to:
ALLOWED_TABLES: dict[tuple[str, str], str] = {
    ("app/cypher_guard.py", "WRITE_OPERATORS"): (
        "the read-only guard's names for write plan operators, quoted in its refusals "
        "('CREATE INDEX', 'DROP CONSTRAINT', ...); never run"
    ),
    ("app/cypher_guard.py", "REFUSED_OPERATORS"): (
        "the read-only guard's refusal texts for operators it never allows ('LOAD CSV (it "
        "reads files ...)', 'SHOW SETTINGS (...)'); never run"
    ),
}
# Single strings, as the scan sees them (`{}` where a run-time value goes):
ALLOWED: dict[tuple[str, str], str] = {
    ("app/cypher_guard.py", "EXPLAIN {}"): (
        "the read-only guard plans the user's own ad-hoc statement as `EXPLAIN <statement>` "
        "(app/cypher_guard.py, vet) before anything runs: the statement is the user's, only "
        "the prefix is the code's"
    ),
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
        ):
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _text(node: ast.AST) -> str | None:
    """The string `node` builds, with `{}` for what is only known at run time; None when it
    builds no string."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    return None


def _tables(tree: ast.Module) -> dict[int, str]:
    """id of every node inside a module-level assignment's value → the name assigned."""
    owner: dict[int, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue
        if isinstance(target, ast.Name):
            owner |= {id(node): target.id for node in ast.walk(value)}
    return owner


def strings(path: Path) -> Iterator[tuple[int, str, str | None]]:
    """(line, text, table) of every string built in `path`, docstrings left out; a string
    that is part of a larger one (an f-string's pieces, one side of a `+`) only as that
    whole. `table` is the module-level name whose value holds it, if any."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr | ast.BinOp):
            skip |= {id(child) for child in ast.walk(node) if child is not node}
    tables = _tables(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        text = _text(node)
        if text is not None:
            yield node.lineno, text, tables.get(id(node))


def source_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def inline_cypher() -> list[tuple[str, int, str, str | None]]:
    """(file, line, text, table) of every string in app/, graph/, ingest/ shaped like Cypher."""
    return [
        (path.relative_to(REPO).as_posix(), line, text, table)
        for path in source_files()
        for line, text, table in strings(path)
        if looks_like_cypher(text)
    ]


def test_the_detector_recognises_every_statement_in_cypher() -> None:
    texts = {
        f"{name}[{i}]": statement
        for name in cypher.names()
        for i, statement in enumerate(cypher.statements(name))
    }
    texts |= {f"browser/{name}": text for name, text in cypher.browser_queries().items()}
    assert len(texts) > 50
    missed = [name for name, text in texts.items() if not looks_like_cypher(text)]
    assert not missed, missed
    # and statements written inline, the way the scan must catch them
    for text in (
        "MATCH (c:Chunk {collection: $collection}) RETURN c.id",
        "match (n) return n limit 1",
        "RETURN 1",
        "SHOW DATABASES",
        "UNWIND $rows AS row SET x.y = row.y",
        "call gds.graph.drop($name)",
        "  CREATE INDEX foo IF NOT EXISTS FOR (n:Foo) ON (n.bar)",
        "{} DETACH DELETE n",
        "EXPLAIN {}",
    ):
        assert looks_like_cypher(text), text


def test_the_detector_leaves_sql_keywords_and_prose_alone() -> None:
    for text in (
        "DELETE FROM chunks WHERE doc_id = ?",
        "UPDATE tokens SET df = df + ? WHERE id = ?",
        "INSERT INTO mentions (chunk_id, entity_key, count) VALUES (?, ?, ?)",
        "CREATE",
        "DETACH DELETE",
        "Create a collection first (neorag ingest PATH --collection NAME)",
        "return to the chat",
        "with keys, each route needs a key: Authorization: Bearer <key>",
        "Show the evidence",
    ):
        assert not looks_like_cypher(text), text


def test_no_inline_cypher_in_the_source() -> None:
    """Each statement the code runs is a `cypher.load(name)` of a file in cypher/; a string
    shaped like Cypher in app/, graph/ or ingest/ is named here as file:line."""
    found = inline_cypher()
    assert found, "the allow-listed strings were not found: the scan read nothing"
    unexpected = [
        f"{path}:{line}: {' '.join(text.split())[:120]!r}"
        for path, line, text, table in found
        if (path, text) not in ALLOWED and (path, table) not in ALLOWED_TABLES
    ]
    assert not unexpected, "inline Cypher (move it to a cypher/*.cypher file):\n" + "\n".join(
        unexpected
    )
    stale = (set(ALLOWED) - {(p, text) for p, _, text, _ in found}) | (
        set(ALLOWED_TABLES) - {(p, table) for p, _, _, table in found}
    )
    assert not stale, f"allow-list entries the source no longer has: {sorted(stale)}"


def _named_queries(path: Path) -> Iterator[tuple[int, str]]:
    """(line, name) of every literal Cypher file name `path` passes: `cypher.load(name)`,
    `cypher.statements(name)` anywhere, and the Neo4j store's own runners in graph/neo4j/
    (`read/write/gds_query(name)`, `run_in/_run/_unwind(tx, name, ...)`)."""
    in_store = path.parent == REPO / "graph" / "neo4j"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        attr, owner = node.func.attr, node.func.value
        by_cypher = isinstance(owner, ast.Name) and owner.id == "cypher"
        first = (by_cypher and attr in {"load", "statements"}) or (
            in_store and attr in {"read", "write", "gds_query"}
        )
        position = 0 if first else 1 if in_store and attr in {"run_in", "_run", "_unwind"} else None
        if position is None or len(node.args) <= position:
            continue
        arg = node.args[position]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            yield node.lineno, arg.value


def test_every_statement_name_the_code_uses_is_a_file_in_cypher() -> None:
    known = set(cypher.names())
    used = [
        (path.relative_to(REPO).as_posix(), line, name)
        for path in source_files()
        for line, name in _named_queries(path)
    ]
    assert len(used) > 50  # the store's runners were found, not nothing
    missing = [f"{path}:{line}: {name}" for path, line, name in used if name not in known]
    assert not missing, missing
