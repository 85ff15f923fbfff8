import { analyticsQuerySettings, asQueryLimitError, DEFAULT_ANALYTICS_QUERY_LIMITS, QueryLimitError } from './query-limits';

describe('analytics query limits', () => {
  it('turns the errors of the limits into QueryLimitError, and leaves any other error alone', () => {
    // By code: the client reads `type` out of the message, so it is not always the error's name.
    for (const [code, kind] of [
      ['159', 'time'], // TIMEOUT_EXCEEDED
      ['241', 'memory'], // MEMORY_LIMIT_EXCEEDED
      ['396', 'result'], // TOO_MANY_ROWS_OR_BYTES
      ['158', 'result'], // TOO_MANY_ROWS
    ] as const) {
      const mapped = asQueryLimitError(Object.assign(new Error('x'), { code, type: 'UUID' }), DEFAULT_ANALYTICS_QUERY_LIMITS);
      expect(mapped).toBeInstanceOf(QueryLimitError);
      expect(mapped).toMatchObject({ kind });
    }
    const other = Object.assign(new Error('x'), { code: '62', type: 'TIMEOUT_EXCEEDED' });
    expect(asQueryLimitError(other, DEFAULT_ANALYTICS_QUERY_LIMITS)).toBe(other);
  });

  it('names the limit in the message', () => {
    const limits = { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxExecutionSeconds: 7 };
    expect((asQueryLimitError({ code: '159' }, limits) as Error).message).toMatch(/longer than 7 s/);
  });

  it('sends the priority and thread niceness of the reads where they are set', () => {
    expect(analyticsQuerySettings({ ...DEFAULT_ANALYTICS_QUERY_LIMITS, priority: 2, threadNice: 19 })).toMatchObject({
      priority: '2',
      os_thread_priority: '19',
    });
    expect(analyticsQuerySettings(DEFAULT_ANALYTICS_QUERY_LIMITS)).not.toHaveProperty('priority');
    expect(analyticsQuerySettings(DEFAULT_ANALYTICS_QUERY_LIMITS)).not.toHaveProperty('os_thread_priority');
  });
});
