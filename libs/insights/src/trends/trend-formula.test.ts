import { evaluateFormula, FormulaError, parseFormula } from './trend-formula';

describe('trend formulas', () => {
  const A = [1, 2, 3];
  const B = [2, 0, 6];
  const run = (text: string) => evaluateFormula(parseFormula(text, 2), [A, B]);

  it('computes element-wise with precedence and parentheses', () => {
    expect(run('A+B')).toEqual([3, 2, 9]);
    expect(run('A + B * 2')).toEqual([5, 2, 15]);
    expect(run('(A + B) * 2')).toEqual([6, 4, 18]);
    expect(run('-A + 10')).toEqual([9, 8, 7]);
    expect(run('a*b')).toEqual([2, 0, 18]);
  });

  it('gives 0 where a division is by zero, as PostHog does', () => {
    expect(run('(A-B)/B')).toEqual([-0.5, 0, -0.5]);
    expect(run('A/0')).toEqual([0, 0, 0]);
  });

  it.each([
    ['A+', /Invalid formula/],
    ['C+A', /series "C"/],
    ['A % B', /Operator "%"/],
    ['process.exit()', /only hold/],
    ['"text"', /only hold/],
    ['A ? B : 1', /only hold/],
    ['x'.repeat(2000), /at most 1000/],
  ])('refuses %.40s', (text, message) => {
    expect(() => parseFormula(text, 2)).toThrow(FormulaError);
    expect(() => parseFormula(text, 2)).toThrow(message);
  });
});
