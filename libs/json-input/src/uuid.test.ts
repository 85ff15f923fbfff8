import { UUID_PATTERN } from './uuid';

describe('UUID_PATTERN', () => {
  it('accepts the canonical text form in either case, any version', () => {
    expect(UUID_PATTERN.test('0190a3b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b')).toBe(true);
    expect(UUID_PATTERN.test('0190A3B2-7C4D-4E8F-9A0B-1C2D3E4F5A6B')).toBe(true);
  });

  it('refuses other shapes: no hyphens, braces, a trailing character, a non-hex digit', () => {
    for (const text of [
      '0190a3b27c4d7e8f9a0b1c2d3e4f5a6b',
      '{0190a3b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b}',
      '0190a3b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b\n',
      '0190a3b2-7c4d-7e8f-9a0b-1c2d3e4f5a6g',
    ]) {
      expect(UUID_PATTERN.test(text)).toBe(false);
    }
  });
});
