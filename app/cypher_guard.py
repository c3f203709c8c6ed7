"""The read-only guard for ad-hoc Cypher: a statement is planned with EXPLAIN, never run, and
its plan may hold only operators, procedures and functions known to be read-only.

A READ transaction alone is not read-only: GDS declares `gds.graph.project/drop/export` and
every `mutate` mode READ procedures, and LOAD CSV is a read clause that reaches files and
URLs. The guard is default-deny: an operator, procedure or function that is not on an
allow-list below is refused, so a new plugin or a new GDS procedure is refused until someone
decides it is safe. The plan is the right thing to inspect because the server has already
resolved what the text means there: subqueries (`CALL { }`, `EXISTS { }`, `COLLECT { }`),
UNION branches, comments, backtick-quoted and differently-cased names all become the same
operators and resolved names, and literals become `$auto…` parameters, so no string inside a
literal is mistaken for a call. The READ transaction stays as the second layer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from neo4j import Transaction
from neo4j.exceptions import ClientError

import cypher
from graph.errors import StatementRefused


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Operators of read-only plans in Neo4j 5.26 (names as EXPLAIN reports them, without the
# "(All)"/"(Into)" variant suffix or the "@database" part).
READ_OPERATORS = _names(
    """
    AllNodesScan AntiConditionalApply AntiSemiApply Apply Argument ArgumentTracker
    AssertSameNode AssertSameRelationship AssertingMultiNodeIndexSeek
    AssertingMultiRelationshipIndexSeek BidirectionalRepeat CacheProperties CartesianProduct
    ConditionalApply DirectedAllRelationshipsScan DirectedRelationshipByElementIdSeek
    DirectedRelationshipByIdSeek DirectedRelationshipIndexContainsScan
    DirectedRelationshipIndexEndsWithScan DirectedRelationshipIndexScan
    DirectedRelationshipTypeScan DirectedUnionRelationshipTypesScan Distinct Eager
    EagerAggregation EmptyResult EmptyRow ExhaustiveLimit Expand Filter
    IntersectionNodeByLabelsScan LetAntiSemiApply LetSelectOrAntiSemiApply LetSelectOrSemiApply
    LetSemiApply Limit MultiNodeIndexSeek NodeByElementIdSeek NodeByIdSeek NodeByLabelScan
    NodeCountFromCountStore NodeHashJoin NodeIndexContainsScan NodeIndexEndsWithScan
    NodeIndexScan NodeLeftOuterHashJoin NodeRightOuterHashJoin NullifyMetadata Optional
    OptionalExpand OrderedAggregation OrderedDistinct OrderedUnion PartialSort PartialTop
    PathPropagatingBFS PreserveOrder ProcedureCall ProduceResults ProjectEndpoints Projection
    RelationshipCountFromCountStore Repeat RollUpApply SelectOrAntiSemiApply SelectOrSemiApply
    SemiApply ShortestPath ShowConstraints ShowFunctions ShowIndexes ShowProcedures Skip Sort
    StatefulShortestPath SubtractionNodeByLabelsScan Top Top1WithTies TriadicBuild
    TriadicFilter TriadicSelection UndirectedAllRelationshipsScan
    UndirectedRelationshipByElementIdSeek UndirectedRelationshipByIdSeek
    UndirectedRelationshipIndexContainsScan UndirectedRelationshipIndexEndsWithScan
    UndirectedRelationshipIndexScan UndirectedRelationshipTypeScan
    UndirectedUnionRelationshipTypesScan Union UnionNodeByLabelsScan Unwind ValueHashJoin
    VarLengthExpand
    """
)
# Index seeks are named from parts: NodeIndexSeek, NodeUniqueIndexSeekByRange, ...
_INDEX_SEEK = re.compile(r"(Node|DirectedRelationship|UndirectedRelationship)(Unique)?IndexSeek")
WRITE_OPERATORS = {
    "Create": "CREATE",
    "Merge": "MERGE",
    "LockingMerge": "MERGE",
    "Delete": "DELETE",
    "DetachDelete": "DETACH DELETE",
    "SetLabels": "SET",
    "SetProperty": "SET",
    "SetProperties": "SET",
    "SetPropertiesFromMap": "SET",
    "SetNodePropertiesFromMap": "SET",
    "SetRelationshipPropertiesFromMap": "SET",
    "SetDynamicProperty": "SET",
    "RemoveLabels": "REMOVE",
    "Foreach": "FOREACH",
    "CreateIndex": "CREATE INDEX",
    "DropIndex": "DROP INDEX",
    "CreateConstraint": "CREATE CONSTRAINT",
    "DropConstraint": "DROP CONSTRAINT",
    "DoNothingIfExists": "CREATE … IF NOT EXISTS",
}
REFUSED_OPERATORS = {
    "LoadCSV": "LOAD CSV (it reads files or URLs on the server)",
    "TransactionApply": "CALL { … } IN TRANSACTIONS (it commits on its own)",
    "TransactionForeach": "CALL { … } IN TRANSACTIONS (it commits on its own)",
    "TerminateTransactions": "TERMINATE TRANSACTIONS (it stops other sessions' work)",
    "ShowTransactions": "SHOW TRANSACTIONS (it shows other sessions' queries)",
    "ShowSettings": "SHOW SETTINGS (it shows the server's configuration)",
    "AdministrationCommand": "an administration command (users, roles, databases)",
}

READ_ONLY_PROCEDURES = frozenset(
    {
        "db.labels",
        "db.relationshipTypes",
        "db.propertyKeys",
        "db.schema.visualization",
        "db.schema.nodeTypeProperties",
        "db.schema.relTypeProperties",
        "db.index.vector.queryNodes",
        "db.index.vector.queryRelationships",
        "db.index.fulltext.queryNodes",
        "db.index.fulltext.queryRelationships",
        "db.index.fulltext.listAvailableAnalyzers",
        "db.info",
        "db.ping",
        "gds.version",
        "gds.list",
        "gds.graph.list",
        "gds.graph.exists",
        "gds.model.list",
        "gds.model.exists",
        "gds.license.state",
    }
)
READ_ONLY_FUNCTIONS = frozenset(
    {"gds.version", "gds.graph.exists", "gds.isLicensed", "gds.alpha.ml.oneHotEncoding"}
)
READ_ONLY_FUNCTION_PREFIXES = ("gds.util.", "gds.similarity.", "gds.alpha.linkprediction.")
# GDS algorithm modes that read an existing projection and return rows; `estimate` only
# computes a memory estimate, whatever mode it estimates.
READ_ONLY_GDS_MODES = frozenset({"stream", "stats", "estimate"})
# GDS catalogs: creating, changing or dropping graphs, models, pipelines and defaults.
_GDS_CATALOG = re.compile(r"^gds\.(?:alpha\.|beta\.)?(graph|model|pipeline|config)\.")
_GDS_CREATES = re.compile(r"^gds\.(?:alpha\.|beta\.)?graph\.(project|filter|generate|sample)")

_IDENT = r"(?:[A-Za-z_][A-Za-z0-9_]*|`(?:[^`]|``)+`)"
# A call in an operator's rendered expression: a (possibly dotted) name and "(".
_CALL = re.compile(rf"(?<![\w.`$]){_IDENT}(?:\.{_IDENT})*(?=\s*\()")
_PROCEDURE = re.compile(rf"^\s*({_IDENT}(?:\.{_IDENT})*)\s*\(")


def _unquote(name: str) -> str:
    return ".".join(
        part[1:-1].replace("``", "`") if part.startswith("`") else part
        for part in re.findall(_IDENT, name)
    )


def _gds_mode_allowed(name: str) -> bool:
    """`gds.pageRank.stream`, `gds.leiden.stats`, `gds.fastRP.write.estimate` and the
    projection streams `gds.graph.nodeProperty.stream`... are read-only; everything else in
    the GDS catalogs, and every `mutate`, `write` or `train`, is not."""
    parts = name.split(".")
    mode = parts[-1]
    if mode not in READ_ONLY_GDS_MODES or len(parts) < 3:
        return False
    catalog = _GDS_CATALOG.match(name)
    if catalog is None:
        return True
    return catalog.group(1) == "graph" and mode == "stream" and not _GDS_CREATES.match(name)


def procedure_allowed(name: str) -> bool:
    if name in READ_ONLY_PROCEDURES:
        return True
    return name.startswith("gds.") and _gds_mode_allowed(name)


def function_allowed(name: str) -> bool:
    return name in READ_ONLY_FUNCTIONS or name.startswith(READ_ONLY_FUNCTION_PREFIXES)


def why_refused(name: str) -> str:
    """The reason a person reads for a refused procedure or function."""
    parts = name.split(".")
    if _GDS_CREATES.match(name):
        return "it creates a GDS projection in server memory"
    if re.match(r"^gds\.(?:alpha\.|beta\.)?graph\.drop", name):
        return "it drops a GDS projection"
    if re.match(r"^gds\.(?:alpha\.|beta\.)?graph\.export", name):
        return "it exports a GDS projection to a database or files"
    if _GDS_CATALOG.match(name):
        return "it changes a GDS catalog (graphs, models, pipelines or defaults)"
    if {"mutate", "write", "train"} & set(parts[1:]):
        mode = next(p for p in parts[1:] if p in {"mutate", "write", "train"})
        return f"its {mode} mode changes the database or the GDS catalog"
    if parts[0] == "dbms":
        return "dbms procedures administer the server"
    if parts[0] == "apoc":
        return "APOC is not on the read-only allow-list"
    return "it is not on the read-only allow-list"


def _operators(plan: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield plan
    for child in plan.get("children") or ():
        yield from _operators(child)


def _texts(args: Mapping[str, Any]) -> Iterator[str]:
    for key, value in args.items():
        if key == "string-representation":  # the rendered table: wrapped, so names split
            continue
        if isinstance(value, str):
            yield value
        elif isinstance(value, list | tuple):
            yield from (v for v in value if isinstance(v, str))


def _operator_refusal(base: str) -> str | None:
    if base in WRITE_OPERATORS:
        return f"a write ({WRITE_OPERATORS[base]})"
    if base in REFUSED_OPERATORS:
        return REFUSED_OPERATORS[base]
    if base in READ_OPERATORS or _INDEX_SEEK.fullmatch(base.removesuffix("ByRange")):
        return None
    return f"plan operator {base} (not on the read-only allow-list)"


def _call_refusals(text: str, builtins: set[str], plugin_functions: set[str]) -> Iterator[str]:
    """Calls inside one operator's rendered expressions. A plugin function must be on the
    allow-list; a dotted name that is neither a plugin function nor built in is a procedure
    inside an expression; other words before "(" are Cypher's own functions or syntax."""
    for token in _CALL.findall(text):
        name = _unquote(token)
        if name in plugin_functions:
            if not function_allowed(name):
                yield f"function {name} ({why_refused(name)})"
        elif "." in name and name.lower() not in builtins and not procedure_allowed(name):
            yield f"{name} ({why_refused(name)})"


def plan_refusals(
    plan: Mapping[str, Any], *, database: str, builtin_functions: Iterable[str], udfs: Iterable[str]
) -> list[str]:
    """Everything in an EXPLAIN plan (the driver's `ResultSummary.plan`) that a read-only
    statement may not do, as short phrases; an empty list means the plan is read-only.

    `builtin_functions` are Cypher's own (pure) functions, compared case-insensitively as
    Cypher does; `udfs` are the plugin functions the server knows."""
    builtins = {name.lower() for name in builtin_functions}
    plugin_functions = set(udfs)
    refusals: dict[str, None] = {}  # ordered and without repeats
    for operator in _operators(plan):
        kind, _, where = str(operator.get("operatorType", "")).partition("@")
        base = kind.split("(", 1)[0].removeprefix("Partitioned")
        args = operator.get("args") or {}
        if where and where.lower() != database.lower():
            refusals[f"a statement on database {where!r} (this console reads {database!r})"] = None
        if reason := _operator_refusal(base):
            refusals[reason] = None
        texts = list(_texts(args))
        if base == "ProcedureCall":
            details = str(args.get("Details", ""))
            match = _PROCEDURE.match(details)
            name = _unquote(match.group(1)) if match else "an unnamed procedure"
            if not procedure_allowed(name):
                refusals[f"procedure {name} ({why_refused(name)})"] = None
            # Its arguments may hold calls of their own; its name is checked above.
            texts = [t for t in texts if t != details] + [details[match.end() :] if match else ""]
        for text in texts:
            refusals.update(dict.fromkeys(_call_refusals(text, builtins, plugin_functions)))
    return list(refusals)


def vet(tx: Transaction, statement: str, params: Mapping[str, Any], *, database: str) -> None:
    """Plan `statement` with EXPLAIN inside `tx` (nothing runs) and raise StatementRefused,
    one line naming everything refused, unless the plan is read-only."""
    try:
        summary = tx.run("EXPLAIN " + statement, dict(params)).consume()
    except ClientError as exc:
        if "conflicting values for execution mode" in (exc.message or ""):
            raise StatementRefused(
                "read-only mode refused PROFILE (it runs the statement; only a plan is vetted)"
            ) from None
        raise
    if not summary.plan:
        raise StatementRefused("read-only mode refused the statement: the server returned no plan")
    home = "@" + database.lower()
    if any(
        not str(op.get("operatorType", "")).lower().endswith(home)
        for op in _operators(summary.plan)
    ):
        # Administration commands plan on the system database, and a transaction that
        # planned one may run nothing else: refuse on the operators alone.
        refusals = plan_refusals(summary.plan, database=database, builtin_functions=(), udfs=())
    else:
        functions = tx.run(cypher.load("show_functions")).data()
        refusals = plan_refusals(
            summary.plan,
            database=database,
            builtin_functions=[f["name"] for f in functions if f["isBuiltIn"]],
            udfs=[f["name"] for f in functions if not f["isBuiltIn"]],
        )
    if refusals:
        raise StatementRefused("read-only mode refused " + "; ".join(refusals))
