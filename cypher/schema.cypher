// Constraints and indexes for the neorag graph model (idempotent). Statements are
// separated by semicolons. Every node carries its collection: tokens, entities,
// communities and meta entries are unique within a collection; document and chunk ids
// start with the collection's name, so they are unique in the database. The first four
// statements drop the database-wide constraints of neorag before collections. The last two
// serve queries from the database itself (database serving): title keys, chunk tokens.
DROP CONSTRAINT token_text IF EXISTS;
DROP CONSTRAINT entity_key IF EXISTS;
DROP CONSTRAINT community_id IF EXISTS;
DROP CONSTRAINT meta_key IF EXISTS;
CREATE CONSTRAINT document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE;
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE;
CREATE CONSTRAINT token_in_collection IF NOT EXISTS FOR (t:Token) REQUIRE (t.collection, t.text) IS UNIQUE;
CREATE CONSTRAINT entity_in_collection IF NOT EXISTS FOR (e:Entity) REQUIRE (e.collection, e.key) IS UNIQUE;
CREATE CONSTRAINT community_in_collection IF NOT EXISTS FOR (m:Community) REQUIRE (m.collection, m.id) IS UNIQUE;
CREATE CONSTRAINT meta_in_collection IF NOT EXISTS FOR (m:NeoragMeta) REQUIRE (m.collection, m.key) IS UNIQUE;
CREATE CONSTRAINT lock_collection IF NOT EXISTS FOR (l:NeoragLock) REQUIRE l.collection IS UNIQUE;
CREATE INDEX document_collection IF NOT EXISTS FOR (d:Document) ON (d.collection);
CREATE INDEX chunk_collection IF NOT EXISTS FOR (c:Chunk) ON (c.collection);
CREATE INDEX token_collection IF NOT EXISTS FOR (t:Token) ON (t.collection);
CREATE INDEX token_graph_change IF NOT EXISTS FOR (c:TokenGraphChange) ON (c.collection, c.version);
CREATE INDEX entity_collection IF NOT EXISTS FOR (e:Entity) ON (e.collection);
CREATE INDEX community_collection IF NOT EXISTS FOR (m:Community) ON (m.collection);
CREATE INDEX meta_collection IF NOT EXISTS FOR (m:NeoragMeta) ON (m.collection);
CREATE INDEX chunk_doc IF NOT EXISTS FOR (c:Chunk) ON (c.doc_id);
CREATE INDEX document_source IF NOT EXISTS FOR (d:Document) ON (d.source);
CREATE INDEX document_title_key IF NOT EXISTS FOR (d:Document) ON (d.collection, d.title_key);
CREATE FULLTEXT INDEX chunk_tokens IF NOT EXISTS FOR (c:Chunk) ON EACH [c.tokens, c.collection]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}
