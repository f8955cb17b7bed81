import assert from 'node:assert/strict';
import { loadConfig } from '../../../src/config.js';
import { parseIndexLocation } from '../../../src/index/location.js';

describe('CAIRN_INDEX', () => {
  it('is the embedded index when unset, empty or "embedded"', () => {
    for (const value of [undefined, '', ' embedded ']) assert.deepEqual(parseIndexLocation({ CAIRN_INDEX: value }), { kind: 'embedded' });
  });

  it('reads milvus://host[:port][/database], with the default port and database', () => {
    assert.deepEqual(parseIndexLocation({ CAIRN_INDEX: 'milvus://milvus:19530' }), { kind: 'milvus', address: 'milvus:19530', database: 'default', token: undefined });
    assert.deepEqual(parseIndexLocation({ CAIRN_INDEX: 'milvus://10.0.0.5/cairn_prod/' }), { kind: 'milvus', address: '10.0.0.5:19530', database: 'cairn_prod', token: undefined });
    assert.deepEqual(parseIndexLocation({ CAIRN_INDEX: 'milvus://[::1]:2000/db1', CAIRN_MILVUS_TOKEN: 'root:Milvus' }), { kind: 'milvus', address: '[::1]:2000', database: 'db1', token: 'root:Milvus' });
  });

  it('refuses values it cannot use, saying why', () => {
    const refused: [string, RegExp][] = [
      ['milvus', /must be embedded or milvus:\/\/host\[:port\]\[\/database\], got "milvus"/],
      ['http://milvus:19530', /must be embedded or milvus:\/\//],
      ['milvus://:19530', /not a valid milvus:\/\/host/],
      ['milvus://h:99999', /not a valid milvus:\/\/host/],
      ['milvus://h:0', /has port 0/],
      ['milvus://root:pw@h:19530', /must not hold credentials: put them in CAIRN_MILVUS_TOKEN/],
      ['milvus://h:19530/db?secure=true', /has a query or fragment/],
      ['milvus://h/a/b', /"a\/b" is not a Milvus database name/],
      ['milvus://h/1db', /"1db" is not a Milvus database name/],
    ];
    for (const [value, message] of refused) assert.throws(() => parseIndexLocation({ CAIRN_INDEX: value }), message, value);
  });

  it('refuses a Milvus token without a Milvus index: it would be ignored', () => {
    assert.throws(() => parseIndexLocation({ CAIRN_MILVUS_TOKEN: 'root:Milvus' }), /CAIRN_MILVUS_TOKEN is set but CAIRN_INDEX is not a milvus:\/\/ location/);
  });

  it('is part of the configuration, and a malformed value stops loadConfig', () => {
    assert.deepEqual(loadConfig({ CAIRN_INDEX: 'milvus://m:1/x' }).index, { kind: 'milvus', address: 'm:1', database: 'x', token: undefined });
    assert.deepEqual(loadConfig({}).index, { kind: 'embedded' });
    assert.throws(() => loadConfig({ CAIRN_INDEX: 'milvus:/m' }), /CAIRN_INDEX must be embedded or milvus:\/\//);
  });
});
