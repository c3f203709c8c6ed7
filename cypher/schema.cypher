// Constraints and indexes for the neorag graph model (idempotent). Statements are
// separated by semicolons; the vector index dimension comes from $dimension.
CREATE CONSTRAINT document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE;
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE;
CREATE CONSTRAINT token_text IF NOT EXISTS FOR (t:Token) REQUIRE t.text IS UNIQUE;
CREATE CONSTRAINT entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE e.key IS UNIQUE;
CREATE CONSTRAINT community_id IF NOT EXISTS FOR (m:Community) REQUIRE m.id IS UNIQUE;
CREATE CONSTRAINT meta_key IF NOT EXISTS FOR (m:NeoragMeta) REQUIRE m.key IS UNIQUE;
CREATE INDEX chunk_doc IF NOT EXISTS FOR (c:Chunk) ON (c.doc_id);
CREATE INDEX document_source IF NOT EXISTS FOR (d:Document) ON (d.source)
