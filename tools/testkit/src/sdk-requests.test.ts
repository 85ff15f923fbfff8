import { gzipSync } from 'node:zlib';
import { decodeSdkBody, eventsOf, formatRequests } from './sdk-requests';

const batch = {
  api_key: 'phc_x',
  batch: [
    { event: 'a', uuid: '1' },
    { event: 'b', uuid: '2' },
  ],
};

describe('SDK request bodies as the relay reads them', () => {
  it('decodes gzip (by its magic bytes), base64 form data and JSON alike', () => {
    const json = JSON.stringify(batch);
    expect(decodeSdkBody(gzipSync(json), 'text/plain')).toEqual(batch);
    const form = `data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`;
    expect(decodeSdkBody(Buffer.from(form), 'application/x-www-form-urlencoded')).toEqual(batch);
    expect(decodeSdkBody(Buffer.from(json), 'application/json')).toEqual(batch);
    expect(decodeSdkBody(Buffer.alloc(0), 'application/json')).toBeNull();
  });

  it('finds the events of a batch, an array or one event, and lists requests one a line', () => {
    expect(eventsOf(batch).map((e) => e['event'])).toEqual(['a', 'b']);
    expect(eventsOf([{ event: 'c' }])).toEqual([{ event: 'c' }]);
    expect(eventsOf({ event: 'd' })).toEqual([{ event: 'd' }]);
    expect(
      formatRequests([
        { method: 'OPTIONS', path: '/e/', status: 200, contentType: '', contentEncoding: '', body: null },
        { method: 'POST', path: '/batch/', status: 200, contentType: 'application/json', contentEncoding: 'gzip', body: batch },
      ]),
    ).toBe('OPTIONS /e/ -> 200\nPOST /batch/ (application/json, gzip) -> 200 [a, b]');
  });
});
