"""The read-only guard (app/cypher_guard.py) through the service every adapter calls
(app/cypher_service.py), against the real Neo4j + GDS.

Each escape that a READ transaction alone let through is tried on a graph with a live GDS
projection, and afterwards the catalog, the projection and the stored graph are checked to be
exactly as before. What a read-only console must still do (queries, introspection, GDS
streams on the projection) is run too, so an allow-list that is too tight fails here.
"""

from __future__ import annotations

import http.server
import threading
import uuid
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from pydantic import SecretStr

import cypher
from app.cypher_guard import procedure_allowed, why_refused
from app.cypher_service import CypherResult, execute, run_cypher
from app.settings import Settings
from graph.errors import NeoragError, StatementRefused, StatementTimeout, WriteRefused

# "Nothing changed" is checked on the whole database and its GDS catalog, so no other test
# may write while these run (make test runs them after the parallel part).
pytestmark = pytest.mark.exclusive


def run(store: Any, statement: str, write: bool = False, **params: Any) -> CypherResult:
    return execute(
        store.driver,
        store.cfg,
        statement,
        params,
        write=write,
        timeout_seconds=30,
        max_rows=1000,
    )


def refused(store: Any, statement: str, **params: Any) -> str:
    with pytest.raises(NeoragError) as info:
        run(store, statement, **params)
    message = str(info.value)
    assert "\n" not in message and message, message
    return message


def catalog(store: Any) -> set[str]:
    records, _, _ = store.driver.execute_query(
        "CALL gds.graph.list() YIELD graphName RETURN collect(graphName) AS names",
        database_=store.cfg.database,
    )
    return set(records[0]["names"])


def graph_state(store: Any) -> dict[str, Any]:
    """What an escape could change: node and relationship counts, property keys in use,
    the GDS catalog and the projection's node properties."""
    records, _, _ = store.driver.execute_query(
        "CALL () { MATCH (n) RETURN count(n) AS nodes } "
        "CALL () { MATCH ()-[r]->() RETURN count(r) AS rels } "
        "CALL () { MATCH (n) UNWIND keys(n) AS k RETURN collect(DISTINCT k) AS used } "
        "RETURN nodes, rels, used",
        database_=store.cfg.database,
    )
    state = dict(records[0])
    state["used"] = sorted(state["used"])
    state["catalog"] = catalog(store)
    schemas, _, _ = store.driver.execute_query(
        "CALL gds.graph.list() YIELD graphName, schema RETURN graphName, schema",
        database_=store.cfg.database,
    )
    state["schemas"] = {r["graphName"]: r["schema"] for r in schemas}
    return state


@pytest.fixture()
def projection(neo4j_store: Any) -> Iterator[str]:
    """A small token graph and a live GDS projection of it, like the one queries use."""
    name = f"neorag_guard_{uuid.uuid4().hex[:10]}"
    c = neo4j_store.collection  # the fixture's own collection: cleared afterwards
    neo4j_store.driver.execute_query(
        "UNWIND range(0, 9) AS i CREATE (:Token {collection: $c, text: 'guard' + i, df: 1}) "
        "WITH collect(i) AS ids UNWIND ids AS i "
        "MATCH (a:Token {collection: $c, text: 'guard' + i}), "
        "(b:Token {collection: $c, text: 'guard' + ((i + 1) % 10)}) "
        "CREATE (a)-[:CO_OCCURS {weight: 1.0 + i}]->(b)",
        c=c,
        database_=neo4j_store.cfg.database,
    )
    neo4j_store.driver.execute_query(
        "MATCH (a:Token {collection: $c})-[r:CO_OCCURS]->(b:Token) "
        "RETURN gds.graph.project($name, a, b, {relationshipProperties: r {.weight}}, "
        "{undirectedRelationshipTypes: ['*']})",
        name=name,
        c=c,
        database_=neo4j_store.cfg.database,
    )
    try:
        yield name
    finally:
        neo4j_store.driver.execute_query(
            "CALL gds.graph.drop($name, false)", name=name, database_=neo4j_store.cfg.database
        )


# ---- every escape is refused, and nothing changed ------------------------------------------

ESCAPES = {
    "drop the live projection": ("CALL gds.graph.drop($name)", "gds.graph.drop"),
    "drop it, literal name": ("CALL gds.graph.drop('{name}', false)", "gds.graph.drop"),
    "pageRank mutate": (
        "CALL gds.pageRank.mutate($name, {mutateProperty: 'guard_pr'})",
        "gds.pageRank.mutate",
    ),
    "FastRP write": (
        "CALL gds.fastRP.write($name, {embeddingDimension: 4, writeProperty: 'guard_fastrp'})",
        "gds.fastRP.write",
    ),
    "unbounded projection": ("CALL gds.graph.project('big', '*', '*')", "gds.graph.project"),
    "projection as an aggregation function": (
        "MATCH (n) WITH gds.graph.project('big_fn', n, null) AS g RETURN g.graphName",
        "gds.graph.project",
    ),
    "filtered projection": (
        "CALL gds.graph.filter('big_filter', $name, '*', '*')",
        "gds.graph.filter",
    ),
    "export": ("CALL gds.graph.export($name, {dbName: 'stolen'})", "gds.graph.export"),
    "LOAD CSV from a file": ("LOAD CSV FROM 'file:///x.csv' AS row RETURN row", "LOAD CSV"),
    "inside CALL { }": (
        "CALL () { CALL gds.graph.drop($name) YIELD graphName RETURN graphName } RETURN graphName",
        "gds.graph.drop",
    ),
    "inside COUNT { }": (
        "RETURN COUNT { CALL gds.graph.drop($name) YIELD graphName RETURN graphName } AS n",
        "gds.graph.drop",
    ),
    "inside COLLECT { }": (
        "RETURN COLLECT { CALL gds.graph.drop($name) YIELD graphName RETURN graphName } AS n",
        "gds.graph.drop",
    ),
    "inside EXISTS { }": (
        "MATCH (t:Token) WHERE EXISTS { CALL gds.graph.drop($name) YIELD graphName } RETURN t",
        "gds.graph.drop",
    ),
    "second branch of a UNION": (
        "RETURN 'x' AS g UNION CALL gds.graph.drop($name) YIELD graphName RETURN graphName AS g",
        "gds.graph.drop",
    ),
    "backtick-quoted name": ("CALL `gds`.`graph`.`drop`($name)", "gds.graph.drop"),
    "comments around the call": (
        "/* harmless */ CALL // really\n gds.graph.drop($name) // done",
        "gds.graph.drop",
    ),
    "other case": ("CALL GDS.GRAPH.DROP($name)", "GDS.GRAPH.DROP"),
    "a write inside a subquery": (
        "CALL () { CREATE (t:Token {text: 'guard_new'}) RETURN t } RETURN t",
        "CREATE",
    ),
    "IN TRANSACTIONS": (
        "MATCH (t:Token) CALL (t) { SET t.guard = 1 } IN TRANSACTIONS RETURN count(*)",
        "IN TRANSACTIONS",
    ),
    "dbms procedure": ("CALL dbms.listConfig()", "dbms.listConfig"),
    "database-wide side effect": ("CALL db.clearQueryCaches()", "db.clearQueryCaches"),
    "other sessions' work": ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "TERMINATE"),
    "server settings": ("SHOW SETTINGS", "SHOW SETTINGS"),
    "administration command": ("CREATE USER guard SET PASSWORD 'guard-pass-1'", "administration"),
}


@pytest.mark.parametrize("case", list(ESCAPES), ids=list(ESCAPES))
def test_escape_is_refused_and_changes_nothing(
    neo4j_store: Any, projection: str, case: str
) -> None:
    statement, named = ESCAPES[case]
    before = graph_state(neo4j_store)
    message = refused(neo4j_store, statement.replace("{name}", projection), name=projection)
    assert named in message, message
    assert graph_state(neo4j_store) == before
    assert projection in before["catalog"]


def test_guard_refusals_name_the_reason(neo4j_store: Any, projection: str) -> None:
    """Where the procedure is loaded, the guard (not the server) refuses it, typed."""
    cases = {
        f"CALL gds.graph.drop('{projection}')": "drops a GDS projection",
        "CALL gds.graph.project('big', '*', '*')": "creates a GDS projection",
        "MATCH (n) RETURN gds.graph.project('g', n, null) AS g": "function gds.graph.project",
        f"CALL gds.fastRP.write('{projection}', {{embeddingDimension: 4, writeProperty: 'x'}})": (
            "write mode"
        ),
        "LOAD CSV FROM 'http://127.0.0.1:9/' AS row RETURN row": "reads files or URLs",
        "CALL dbms.components()": "administer the server",
        "CREATE (:Token {text: 'guard_x'})": "a write (CREATE)",
        "PROFILE MATCH (t:Token) RETURN t": "PROFILE",
    }
    for statement, reason in cases.items():
        with pytest.raises(StatementRefused, match="read-only mode refused") as info:
            run(neo4j_store, statement)
        assert reason in str(info.value), statement


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        body = b"a,b\n1,2\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_load_csv_from_a_url_makes_no_request_unless_write(neo4j_store: Any) -> None:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Recorder.hits = []
    url = f"http://127.0.0.1:{server.server_port}/guard.csv"
    try:
        message = refused(neo4j_store, "LOAD CSV FROM $url AS row RETURN row", url=url)
        assert "LOAD CSV" in message
        assert _Recorder.hits == []
        # The same statement with write=True is fetched by the server: the check above
        # would have seen a request.
        result = run(neo4j_store, "LOAD CSV FROM $url AS row RETURN row", write=True, url=url)
        assert result.rows == [{"row": ["a", "b"]}, {"row": ["1", "2"]}]
        assert _Recorder.hits == ["/guard.csv"]
    finally:
        server.shutdown()


def test_file_urls_are_off_even_with_write(neo4j_store: Any) -> None:
    with pytest.raises(NeoragError, match="allow_csv_import_from_file_urls"):
        run(neo4j_store, "LOAD CSV FROM 'file:///x.csv' AS row RETURN row", write=True)


def test_write_flag_still_writes_and_projects(neo4j_store: Any) -> None:
    result = run(
        neo4j_store,
        "CREATE (:Token {collection: $c, text: 'guard_w'}) RETURN 1 AS ok",
        write=True,
        c=neo4j_store.collection,
    )
    assert result.counters["nodes_created"] == 1
    name = f"neorag_guard_w_{uuid.uuid4().hex[:8]}"
    try:
        run(neo4j_store, "CALL gds.graph.project($name, 'Token', '*')", write=True, name=name)
        assert name in catalog(neo4j_store)
    finally:
        run(neo4j_store, "CALL gds.graph.drop($name, false)", write=True, name=name)


def test_the_server_still_refuses_writes_it_is_given(neo4j_store: Any) -> None:
    """The second layer on its own: a write that reached a READ transaction is refused by
    the server (here run directly, past the guard)."""
    from neo4j import READ_ACCESS
    from neo4j.exceptions import ClientError

    with (
        neo4j_store.driver.session(
            database=neo4j_store.cfg.database, default_access_mode=READ_ACCESS
        ) as session,
        pytest.raises(ClientError) as info,
    ):
        session.run("CREATE (:Token {text: 'guard_r'})").consume()
    assert info.value.code == "Neo.ClientError.Statement.AccessMode"


# ---- what read-only mode must still do --------------------------------------------------


def test_reads_and_introspection_still_run(neo4j_store: Any, projection: str) -> None:
    mine = "MATCH (t:Token {collection: $c}) RETURN t.text AS text ORDER BY text LIMIT 3"
    rows = run(neo4j_store, mine, c=neo4j_store.collection).rows
    assert [r["text"] for r in rows] == ["guard0", "guard1", "guard2"]
    assert {"label": "Token"} in run(neo4j_store, "CALL db.labels()").rows
    assert "CO_OCCURS" in {
        r["relationshipType"] for r in run(neo4j_store, "CALL db.relationshipTypes()").rows
    }
    assert run(neo4j_store, "CALL db.schema.visualization()").rows
    assert run(neo4j_store, "SHOW INDEXES").keys[:2] == ["id", "name"]
    assert "name" in run(neo4j_store, "SHOW CONSTRAINTS").keys
    assert run(neo4j_store, "RETURN gds.version() AS v").rows[0]["v"].startswith("2.")
    listed = run(neo4j_store, "CALL gds.graph.list() YIELD graphName RETURN graphName").rows
    assert {"graphName": projection} in listed
    built_in = run(
        neo4j_store,
        "RETURN date.truncate('month', date('2024-05-17')) AS d, "
        "vector.similarity.cosine([1.0, 0.0], [1.0, 0.0]) AS c, toUpper('x') AS u",
    ).rows
    assert built_in == [{"d": "2024-05-01", "c": 1.0, "u": "X"}]


def test_gds_stream_and_stats_on_an_existing_projection_run(
    neo4j_store: Any, projection: str
) -> None:
    rows = run(
        neo4j_store,
        "MATCH (t:Token {collection: $c, text: 'guard0'}) WITH collect(t) AS seeds "
        "CALL gds.pageRank.stream($name, {sourceNodes: seeds}) YIELD nodeId, score "
        "RETURN gds.util.asNode(nodeId).text AS token, score ORDER BY score DESC LIMIT 3",
        name=projection,
        c=neo4j_store.collection,
    ).rows
    assert rows[0]["token"] == "guard0" and rows[0]["score"] > rows[-1]["score"] > 0
    stats = run(neo4j_store, "CALL gds.leiden.stats($name) YIELD communityCount", name=projection)
    assert stats.rows[0]["communityCount"] >= 1


def test_index_queries_pass_the_guard(neo4j_store: Any) -> None:
    """db.index.*.queryNodes are allowed: the statement reaches the procedure, which then
    says the index is missing (no such index exists in this test graph)."""
    for statement in (
        "CALL db.index.vector.queryNodes('guard_missing', 3, [1.0, 0.0])",
        "CALL db.index.fulltext.queryNodes('guard_missing', 'x')",
    ):
        with pytest.raises(NeoragError) as info:
            run(neo4j_store, statement)
        assert not isinstance(info.value, WriteRefused)
        assert "guard_missing" in str(info.value)


READ_SHAPES = [
    "MATCH (d:Document {id: $id}) RETURN d",  # unique index seek
    "MATCH (c:Chunk) WHERE c.doc_id STARTS WITH $id RETURN c LIMIT 5",  # range seek
    "MATCH (a:Token {collection: $c})-[:CO_OCCURS*1..3]-(b:Token {collection: $c})"
    " RETURN count(*) AS n",
    "MATCH p = shortestPath((a:Token {collection: $c})-[*..4]-(b:Token {collection: $c}))"
    " WHERE a <> b RETURN length(p) LIMIT 3",
    "MATCH (a:Token {collection: $c}) ((x)-[:CO_OCCURS]->(y)){1,2} (b:Token {collection: $c})"
    " RETURN count(*) AS n",
    "MATCH (a:Token {collection: $c}) OPTIONAL MATCH (a)-[r]->()"
    " RETURN a.text, count(r) ORDER BY a.text SKIP 1",
    "MATCH (a:Token {collection: $c}) WHERE NOT EXISTS { (a)-[:HAS_TOKEN]-() }"
    " RETURN DISTINCT a.df",
    "UNWIND $ids AS i MATCH (c:Chunk {id: i}) RETURN c.id UNION ALL RETURN 'x' AS `c.id`",
    "MATCH (a:Token {collection: $c}), (b:Token {collection: $c}) WHERE a.df = b.df AND a <> b"
    " RETURN count(*) AS n",
    "MATCH (n {collection: $c}) RETURN labels(n) AS l, count(*) AS n ORDER BY n DESC LIMIT 10",
    "MATCH (:Token {collection: $c})-[r:CO_OCCURS]->() RETURN count(r) AS n",
    "RETURN [x IN range(1, 5) WHERE x % 2 = 0 | x * x] AS squares, "
    "CASE WHEN $id IS NULL THEN 'none' ELSE 'some' END AS c",
]


@pytest.mark.parametrize("statement", READ_SHAPES)
def test_read_query_shapes_pass_the_guard(neo4j_store: Any, statement: str) -> None:
    neo4j_store.ensure_schema()
    run(neo4j_store, statement, id="x", ids=["a", "b"], c=neo4j_store.collection)


def test_every_repo_statement_uses_only_known_operators(neo4j_store: Any) -> None:
    """The operator allow-list covers every statement neorag itself runs: vetting each one
    refuses only what it really does (writes, GDS catalog changes), never an operator it
    does not know."""
    neo4j_store.ensure_schema()
    unknown, failed = [], []
    for name in cypher.names():
        for statement in cypher.statements(name):
            try:
                run(neo4j_store, "EXPLAIN " + statement)
            except StatementRefused as exc:
                if "plan operator" in str(exc):
                    unknown.append(f"{name}: {exc}")
            except NeoragError as exc:
                failed.append(f"{name}: {exc}")
    assert not unknown, unknown
    assert not failed, failed


# ---- bounds from settings ---------------------------------------------------------------


def _settings(cfg: Any, **cypher_bounds: Any) -> Settings:
    return Settings(
        backend="neo4j",
        neo4j_uri=cfg.uri,
        neo4j_user=cfg.user,
        neo4j_password=SecretStr(cfg.password.get_secret_value()),
        neo4j_database=cfg.database,
        cypher=cypher_bounds,
    )


def test_timeout_and_row_cap_come_from_settings(neo4j_config: Any) -> None:
    settings = _settings(neo4j_config, timeout_seconds=0.3, max_rows=7)
    result = run_cypher(settings, "UNWIND range(1, 100) AS x RETURN x")
    assert [r["x"] for r in result.rows] == list(range(1, 8)) and result.truncated
    assert not run_cypher(settings, "UNWIND range(1, 7) AS x RETURN x").truncated
    slow = "UNWIND range(1, 1000000000) AS x WITH x WHERE x < 0 RETURN count(*)"
    with pytest.raises(StatementTimeout, match=r"0\.3s") as info:
        run_cypher(settings, slow)
    assert info.value.seconds == 0.3
    # Arguments override the settings, as the CLI flags do.
    assert len(run_cypher(settings, "UNWIND range(1, 100) AS x RETURN x", max_rows=50).rows) == 50
    with pytest.raises(StatementTimeout, match=r"0\.2s"):
        run_cypher(settings, slow, timeout_seconds=0.2)


def test_bounds_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEORAG_CYPHER__TIMEOUT_SECONDS", "2.5")
    monkeypatch.setenv("NEORAG_CYPHER__MAX_ROWS", "12")
    settings = Settings()
    assert (settings.cypher.timeout_seconds, settings.cypher.max_rows) == (2.5, 12)


def test_embedded_backend_is_refused_by_the_service() -> None:
    with pytest.raises(NeoragError, match="Neo4j backend"):
        run_cypher(Settings(backend="embedded"), "RETURN 1")


# ---- the allow-list's rules, name by name (servers with every GDS procedure loaded) -----


@pytest.mark.parametrize(
    "name",
    [
        "db.labels",
        "db.schema.visualization",
        "db.index.vector.queryNodes",
        "db.index.fulltext.queryNodes",
        "gds.version",
        "gds.graph.list",
        "gds.pageRank.stream",
        "gds.leiden.stats",
        "gds.pageRank.stream.estimate",
        "gds.fastRP.write.estimate",
        "gds.graph.nodeProperty.stream",
        "gds.alpha.allShortestPaths.stream",
    ],
)
def test_read_only_procedures_are_allowed(name: str) -> None:
    assert procedure_allowed(name)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("gds.graph.drop", "drops"),
        ("gds.graph.project", "creates"),
        ("gds.graph.project.cypher", "creates"),
        ("gds.graph.project.estimate", "creates"),
        ("gds.graph.filter", "creates"),
        ("gds.graph.generate", "creates"),
        ("gds.graph.sample.rwr", "creates"),
        ("gds.alpha.graph.sample.rwr", "creates"),
        ("gds.graph.export", "exports"),
        ("gds.graph.export.csv", "exports"),
        ("gds.beta.graph.export.csv", "exports"),
        ("gds.graph.nodeProperties.write", "catalog"),
        ("gds.graph.relationship.delete", "catalog"),
        ("gds.model.drop", "catalog"),
        ("gds.beta.pipeline.linkPrediction.train", "catalog"),
        ("gds.alpha.config.defaults.set", "catalog"),
        ("gds.pageRank.mutate", "mutate mode"),
        ("gds.pageRank.write", "write mode"),
        ("gds.alpha.kSpanningTree.write", "write mode"),
        ("gds.beta.graphSage.train", "train mode"),
        ("dbms.listConfig", "administer"),
        ("dbms.killConnections", "administer"),
        ("apoc.create.node", "APOC"),
        ("apoc.load.json", "APOC"),
        ("db.createLabel", "allow-list"),
        ("db.stats.collect", "allow-list"),
        ("tx.setMetaData", "allow-list"),
        ("custom.anything", "allow-list"),
    ],
)
def test_everything_else_is_refused_with_its_reason(name: str, reason: str) -> None:
    assert not procedure_allowed(name)
    assert reason in why_refused(name)
