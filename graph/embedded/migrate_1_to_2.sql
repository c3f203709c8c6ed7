-- Format 1 -> 2 (graph/embedded/migrate.py runs it in one transaction): the link tables
-- move from text chunk ids to integer chunk keys, edge kinds to codes. The old indexes go
-- first (their names are the new schema's), the tables are renamed aside, the current
-- schema is created where the marker below stands, then every row is copied through the
-- new keys and the old tables are dropped.
DROP INDEX IF EXISTS chunks_doc;
DROP INDEX IF EXISTS has_token_token;
DROP INDEX IF EXISTS mentions_entity;
DROP INDEX IF EXISTS chunk_edges_dst;
DROP INDEX IF EXISTS chunk_edges_kind;
ALTER TABLE chunks RENAME TO old_chunks;
ALTER TABLE has_token RENAME TO old_has_token;
ALTER TABLE mentions RENAME TO old_mentions;
ALTER TABLE chunk_edges RENAME TO old_chunk_edges;
ALTER TABLE chunk_edge_state RENAME TO old_chunk_edge_state;
-- @schema
INSERT INTO chunks (id, doc_id, ordinal, title, text, section_path, n_tokens, tokens,
    embedding, links, questions, community, fastrp, spectral)
SELECT id, doc_id, ordinal, title, text, section_path, n_tokens, tokens, embedding, links,
    questions, community, fastrp, spectral
FROM old_chunks ORDER BY id;
INSERT INTO has_token (chunk, token_id, tf)
SELECT c.key, h.token_id, h.tf FROM old_has_token h JOIN chunks c ON c.id = h.chunk_id;
INSERT INTO mentions (chunk, entity_key, count)
SELECT c.key, m.entity_key, m.count FROM old_mentions m JOIN chunks c ON c.id = m.chunk_id;
INSERT INTO chunk_edges (src, kind, dst, weight)
SELECT s.key, k.code, d.key, e.weight FROM old_chunk_edges e
JOIN chunks s ON s.id = e.src JOIN chunks d ON d.id = e.dst
JOIN edge_kinds k ON k.name = e.kind;
INSERT INTO chunk_edge_state (chunk, state)
SELECT c.key, s.state FROM old_chunk_edge_state s JOIN chunks c ON c.id = s.chunk_id;
DROP TABLE old_chunks;
DROP TABLE old_has_token;
DROP TABLE old_mentions;
DROP TABLE old_chunk_edges;
DROP TABLE old_chunk_edge_state;
