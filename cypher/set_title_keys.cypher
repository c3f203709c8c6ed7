// Store documents' case-folded title keys (graph/titles.py: folded_title_key).
// :param rows => [{id: 'default:doc.md', key: 'lothair ii'}]
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
WHERE d.collection = $collection
SET d.title_key = row.key
