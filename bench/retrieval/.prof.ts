import { openIndexDatabase } from '../../src/index/sqlite-database.js';
const db = openIndexDatabase(':memory:');
import { SqliteChunkIndex } from '../../src/index/sqlite-index.js';
new SqliteChunkIndex(db);
for (const sql of [
 `SELECT r.id FROM json_each(?) j JOIN chunk_rows r ON r.id = j.value LEFT JOIN chunk_vectors v ON v.row = r.rowid`,
 `WITH coarse AS (SELECT k.row FROM chunk_keys k WHERE k.dataset_id IN (SELECT value FROM json_each(?)) AND k.dim = 3 ORDER BY vec_distance_hamming(vec_bit(k.bits), vec_bit(?)) LIMIT 10) SELECT * FROM coarse c JOIN chunk_vectors v ON v.row = c.row`,
 `SELECT term, doc FROM chunk_fts_terms WHERE term IN (SELECT value FROM json_each(?))`,
]) console.log(db.prepare('EXPLAIN QUERY PLAN ' + sql).all(...Array(sql.split('?').length - 1).fill('[]')).map((r: any) => r.detail));
