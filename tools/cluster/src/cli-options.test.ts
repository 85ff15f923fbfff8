import path from 'node:path';
import { defaultDir, parseCli } from './cli-options';

describe('start:cluster command line', () => {
  it('starts 2 gateways, 3 workers and 2 api processes on 12 partitions by default', () => {
    expect(parseCli([])).toEqual({ kind: 'start', dir: defaultDir(), gateways: 2, workers: 3, apis: 2, partitions: 12, port: 8000, follow: true });
  });

  it('reads the counts, the port and the directory', () => {
    expect(parseCli(['--gateways', '1', '--workers', '4', '--api', '3', '--partitions', '8', '--port', '0', '--dir', 'here', '--quiet'])).toEqual({
      kind: 'start',
      dir: path.resolve('here'),
      gateways: 1,
      workers: 4,
      apis: 3,
      partitions: 8,
      port: 0,
      follow: false,
    });
  });

  it('adds, stops and lists processes of a running cluster', () => {
    expect(parseCli(['--add', 'worker'])).toEqual({ kind: 'add', dir: defaultDir(), role: 'worker' });
    expect(parseCli(['--stop', 'gateway:2', '--dir', '/tmp/c'])).toEqual({ kind: 'stop', dir: '/tmp/c', name: 'gateway:2' });
    expect(parseCli(['--status'])).toEqual({ kind: 'status', dir: defaultDir() });
  });

  it.each([
    [['--workers', '0'], '--workers must be an integer from 1 to 64 (got 0)'],
    [['--partitions', '2.5'], '--partitions must be an integer from 1 to 1000 (got 2.5)'],
    [['--add', 'kafka'], '--add takes gateway, worker, api (got kafka)'],
    [['--stop', 'postgres'], '--stop takes a process name such as worker:2 (got postgres)'],
    [['--add', 'worker', '--stop', 'worker:1'], 'give one of --add, --stop and --status'],
    [['--add', 'worker', '--workers', '2'], '--workers is for starting a cluster, not with --add, --stop or --status'],
    [['start'], 'unexpected argument start'],
  ])('refuses %j with a message', (argv, message) => {
    expect(() => parseCli(argv)).toThrow(message);
  });
});
