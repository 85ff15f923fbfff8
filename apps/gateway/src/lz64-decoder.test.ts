import LZString from 'lz-string';
import { createLz64Decoder } from './lz64-decoder';

describe('lz64 decoder', () => {
  it('decodes a payload arriving while the idle thread is being retired', async () => {
    const decoder = createLz64Decoder();
    const text = JSON.stringify({ event: 'e', distinct_id: 'd' });
    const data = LZString.compressToBase64(text);
    try {
      // The idle thread is retired 200 ms after the last job; requests spaced around that
      // moment land while it exits. Each must still decode (it used to be answered "too large").
      for (const gapMs of [195, 198, 200, 202, 205, 210, 200, 201, 199, 203]) {
        await expect(decoder.decode(data, 1_000_000)).resolves.toEqual({ ok: true, text });
        await new Promise((resolve) => setTimeout(resolve, gapMs));
      }
      await expect(decoder.decode(data, 1_000_000)).resolves.toEqual({ ok: true, text });
    } finally {
      await decoder.close();
    }
  });
});
