import { gzipSync } from 'node:zlib';
import { ApiError } from '@sightline/http';
import { decodeFlagsBody, readFlagRequest } from './decide-request';
import { decideShape, flagsShape } from './decide-response';

const json = { token: 'phc_x', distinct_id: 'u' };

describe('flags request decoding', () => {
  it('reads JSON, gzip (magic bytes or ?compression), form base64 and bare base64', () => {
    const text = JSON.stringify(json);
    expect(decodeFlagsBody(Buffer.from(text), 'application/json', undefined)).toEqual(json);
    expect(decodeFlagsBody(gzipSync(text), 'text/plain', undefined)).toEqual(json);
    expect(decodeFlagsBody(gzipSync(text), 'text/plain', 'gzip-js')).toEqual(json);
    const b64 = Buffer.from(text).toString('base64');
    expect(decodeFlagsBody(Buffer.from(`data=${encodeURIComponent(b64)}`), 'application/x-www-form-urlencoded', 'base64')).toEqual(json);
    expect(decodeFlagsBody(Buffer.from(b64.replace(/=+$/, '')), 'text/plain', undefined)).toEqual(json);
  });

  it('refuses bodies that are none of those with a 400', () => {
    for (const raw of ['', 'not json', '[1,2]']) {
      expect(() => decodeFlagsBody(Buffer.from(raw), 'application/json', undefined)).toThrow(ApiError);
    }
  });

  it('takes the field aliases and stringifies numeric distinct ids', () => {
    const request = readFlagRequest({
      api_key: 'phc_y',
      $distinct_id: 12.5,
      $groups: { company: 'acme' },
      $properties: { a: 1 },
      anon_distinct_id: 'anon',
      flag_keys: ['k'],
    });
    expect(request).toMatchObject({
      token: 'phc_y',
      distinctId: '12.5',
      groups: { company: 'acme' },
      personProperties: { a: 1 },
      anonDistinctId: 'anon',
      flagKeys: ['k'],
    });
    expect(() => readFlagRequest({ token: 'phc_y' })).toThrow(ApiError);
  });

  it('takes the first alias holding a value (null counts as none) and strips NULs from group keys only when present', () => {
    const request = readFlagRequest({ token: null, api_key: 'phc_z', distinct_id: 'a\u0000b', groups: { company: 'ac\u0000me', n: 3 }, $groups: { x: 'y' } });
    expect(request).toMatchObject({ token: 'phc_z', distinctId: 'ab', groups: { company: 'acme', n: 3 } });
    const groups = { company: 'acme', project: 'p' };
    expect(readFlagRequest({ distinct_id: 'u', groups }).groups).toEqual({ company: 'acme', project: 'p' });
    expect(readFlagRequest({ distinct_id: 'u', groups: [1] }).groups).toEqual({});
  });
});

describe('response version routing (docs/http-api.md#decide-response)', () => {
  it('flags: no v and no config means v2 with config', () => {
    expect(flagsShape({})).toEqual({ shape: 'flags-v2', withConfig: true });
    expect(flagsShape({ v: '2' })).toEqual({ shape: 'flags-v2', withConfig: false });
    expect(flagsShape({ v: '1', config: 'true' })).toEqual({ shape: 'v3', withConfig: true });
  });

  it('decide: v1 by default, v2, v3, v4', () => {
    expect(decideShape({}).shape).toBe('v1');
    expect(decideShape({ v: '2' }).shape).toBe('v2');
    expect(decideShape({ v: '3' }).shape).toBe('v3');
    expect(decideShape({ v: '4' }).shape).toBe('flags-v2');
  });
});
