import { JobsUsageError, parseJobsArgs } from './jobs-command';

describe('parseJobsArgs', () => {
  it('reads run <job> and status with their options', () => {
    expect(parseJobsArgs(['run', 'person-events-deletion'])).toEqual({ action: 'run', job: 'person-events-deletion', url: null, key: null, dataDir: null });
    expect(parseJobsArgs(['status', '--url', 'http://h:1', '--key', 'phx_k', '--data-dir', '/d'])).toEqual({
      action: 'status',
      job: null,
      url: 'http://h:1',
      key: 'phx_k',
      dataDir: '/d',
    });
  });

  it.each([
    [[], 'a command is needed'],
    [['start'], 'unknown command "start"'],
    [['run'], 'run needs a job name'],
    [['status', 'extra'], 'unexpected argument "extra"'],
    [['run', 'a', 'b'], 'unexpected argument "b"'],
  ])('refuses %j: %s', (argv, message) => {
    expect(() => parseJobsArgs(argv)).toThrow(new JobsUsageError(message));
  });

  it('refuses unknown options', () => {
    expect(() => parseJobsArgs(['status', '--force'])).toThrow(/Unknown option '--force'/);
  });
});
