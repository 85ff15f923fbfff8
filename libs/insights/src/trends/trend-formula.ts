import jsep from 'jsep';

export class FormulaError extends Error {}

type Node = jsep.Expression;

/** The most characters a formula may have: the editor's formulas are a few dozen. */
const MAX_FORMULA_LENGTH = 1_000;

/**
 * A trend formula (`A+B`, `(A-B)/B`, `A*100`) parsed by jsep into an expression tree and
 * checked: only series letters that exist, numbers, + - * / and parentheses. Never evaluated
 * as code.
 */
export function parseFormula(text: string, seriesCount: number): Node {
  if (text.length > MAX_FORMULA_LENGTH) throw new FormulaError(`A formula may have at most ${MAX_FORMULA_LENGTH} characters.`);
  let tree: Node;
  try {
    tree = jsep(text);
  } catch (error) {
    throw new FormulaError(`Invalid formula: ${(error as Error).message}.`);
  }
  const check = (node: Node): void => {
    switch (node.type) {
      case 'BinaryExpression':
        if (!['+', '-', '*', '/'].includes(node['operator'] as string))
          throw new FormulaError(`Operator "${String(node['operator'])}" is not allowed in a formula (use + - * /).`);
        check(node['left'] as Node);
        check(node['right'] as Node);
        return;
      case 'UnaryExpression':
        if (!['-', '+'].includes(node['operator'] as string)) throw new FormulaError(`Operator "${String(node['operator'])}" is not allowed in a formula.`);
        check(node['argument'] as Node);
        return;
      case 'Literal':
        if (typeof node['value'] !== 'number') throw new FormulaError('A formula may only hold numbers, series letters, + - * / and parentheses.');
        return;
      case 'Identifier': {
        const index = letterIndex(node['name'] as string);
        if (index === null || index >= seriesCount)
          throw new FormulaError(`The formula names series "${String(node['name']).slice(0, 20)}", which the query does not have.`);
        return;
      }
      default:
        throw new FormulaError('A formula may only hold numbers, series letters, + - * / and parentheses.');
    }
  };
  check(tree);
  return tree;
}

/** A → 0, B → 1, …, Z → 25 (case-insensitive, as PostHog reads them). */
function letterIndex(name: string): number | null {
  return /^[a-zA-Z]$/.test(name) ? name.toUpperCase().charCodeAt(0) - 65 : null;
}

/**
 * Element-wise value of the formula over the series' data: position i uses each series' i-th
 * number. Division by zero gives 0, as PostHog's FormulaAST does.
 */
export function evaluateFormula(tree: Node, series: readonly (readonly number[])[]): number[] {
  const length = Math.max(0, ...series.map((s) => s.length));
  const at = (node: Node, i: number): number => {
    switch (node.type) {
      case 'Literal':
        return node['value'] as number;
      case 'Identifier':
        return series[letterIndex(node['name'] as string)!]?.[i] ?? 0;
      case 'UnaryExpression': {
        const value = at(node['argument'] as Node, i);
        return node['operator'] === '-' ? -value : value;
      }
      default: {
        const left = at(node['left'] as Node, i);
        const right = at(node['right'] as Node, i);
        switch (node['operator']) {
          case '+':
            return left + right;
          case '-':
            return left - right;
          case '*':
            return left * right;
          default:
            return right === 0 ? 0 : left / right;
        }
      }
    }
  };
  return Array.from({ length }, (_, i) => {
    const value = at(tree, i);
    return Number.isFinite(value) ? value : 0;
  });
}
