"""Connecting to Neo4j with errors people can act on.

Driver exceptions become one-line NeoragErrors that name the fix. The URI and user may
appear in a message; the password never does.
"""

from __future__ import annotations

import logging

from neo4j import Driver, GraphDatabase
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ConfigurationError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

import cypher
from graph.config import Neo4jConfig
from graph.errors import BackendAuthError, BackendUnavailable, GdsMissing, NeoragError

GDS_REQUIRED = (2, 13)

# The driver logs each retry while a server is down ("Transaction failed and will be
# retried in …") as a warning. With no logging configured, Python prints those to the
# terminal, a screenful per outage; the user gets one line from `translate` instead. An app
# that configures logging (the HTTP API) still receives them through its own handlers.
logging.getLogger("neo4j").addHandler(logging.NullHandler())


def unavailable(cfg: Neo4jConfig) -> BackendUnavailable:
    return BackendUnavailable(
        f"cannot reach Neo4j at {cfg.uri}: start it (`make neo4j-start`) or set NEO4J_URI"
    )


def translate(exc: Exception, cfg: Neo4jConfig) -> NeoragError:
    """Map a driver exception to the message a person should see."""
    if isinstance(exc, AuthError):
        return BackendAuthError(
            f"Neo4j at {cfg.uri} rejected user {cfg.user!r}: set NEO4J_USER/NEO4J_PASSWORD "
            "(the local server's password is in .neo4j/dev/password)"
        )
    if isinstance(exc, ServiceUnavailable | SessionExpired | OSError):
        return unavailable(cfg)
    if isinstance(exc, ConfigurationError):
        return BackendUnavailable(f"invalid Neo4j settings for {cfg.uri}: {exc}")
    if (
        isinstance(exc, ClientError)
        and "gds." in str(exc.message or "")
        and ("Unknown function" in str(exc.message) or "no procedure" in str(exc.message).lower())
    ):
        return GdsMissing(
            f"Neo4j at {cfg.uri} has no Graph Data Science plugin: install GDS "
            f"{GDS_REQUIRED[0]}.{GDS_REQUIRED[1]} (`make neo4j-start` runs one) and allow gds.*"
        )
    if isinstance(exc, Neo4jError):
        return NeoragError(f"Neo4j error {exc.code}: {exc.message}")
    return NeoragError(f"{exc.__class__.__name__}: {exc}")


def connect(cfg: Neo4jConfig) -> tuple[Driver, str]:
    """Open a driver, check connectivity and credentials, and require GDS ≥ 2.13.
    Returns the driver and the GDS version."""
    try:
        driver = GraphDatabase.driver(
            cfg.uri,
            auth=(cfg.user, cfg.password.get_secret_value()),
            connection_timeout=cfg.connection_timeout,
            max_transaction_retry_time=cfg.connection_timeout,
            # "label does not exist" and similar notices on an empty database are noise to
            # a user; real problems arrive as errors.
            notifications_min_severity="OFF",
        )
    except (ValueError, ConfigurationError) as exc:
        raise BackendUnavailable(f"invalid NEO4J_URI {cfg.uri!r}: {exc}") from None
    try:
        driver.verify_connectivity()
        records, _, _ = driver.execute_query(cypher.load("gds_version"), database_=cfg.database)
        version = str(records[0]["version"])
    except Exception as exc:
        driver.close()
        raise translate(exc, cfg) from None
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if parts < GDS_REQUIRED:
        driver.close()
        raise GdsMissing(
            f"Neo4j at {cfg.uri} runs GDS {version}; neorag needs GDS "
            f"{GDS_REQUIRED[0]}.{GDS_REQUIRED[1]} or newer"
        )
    return driver, version
