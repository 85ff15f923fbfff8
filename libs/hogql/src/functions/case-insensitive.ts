/**
 * Names HogQL also accepts in any letter case (PostHog marks them `case_sensitive=False` in
 * posthog/hogql/functions: `SuM(x)` is `sum(x)`, `IF(…)` is `if(…)`); every other function must
 * be written exactly (`tostring` is not `toString`).
 */
export const CASE_INSENSITIVE_NAMES: readonly string[] = [
  ...['count', 'min', 'max', 'sum', 'avg'],
  ...['abs', 'lower', 'upper', 'concat', 'substring', 'position', 'extract', 'trim', 'length'],
  ...['floor', 'ceil', 'round', 'isNull', 'coalesce', 'ifNull', 'nullIf', 'now', 'if', 'least', 'greatest'],
];
