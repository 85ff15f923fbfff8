// The benchmarks a newcomer runs on a fresh clone install what they start, as `npm test` does:
// every `bench:*` npm script whose benchmark starts a local service (PostgreSQL, Redis, the Kafka
// mock hosted by kcat) first runs scripts/bench-services.sh with those services' Debian packages,
// and that script, like scripts/test.sh, uses the one install logic in scripts/debian-packages.sh.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The Debian package each service starter (tools/local-services) runs a binary of. */
const PACKAGE_OF_STARTER: Record<string, string> = { startPostgres: 'postgresql', startRedis: 'redis-server', startKafkaMock: 'kcat' };

const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
const benches = Object.entries(scripts).filter(([name]) => name.startsWith('bench:'));

describe('benchmark npm scripts', () => {
  it.each(benches)('%s installs the packages of the services it starts before running', (_name, command) => {
    const file = /bench\/([\w-]+\.ts)/.exec(command)![1]!;
    const source = read(`bench/${file}`);
    const needed = Object.entries(PACKAGE_OF_STARTER)
      .filter(([starter]) => new RegExp(`\\b${starter}\\(`).test(source))
      .map(([, pkg]) => pkg);
    const install = /^bash scripts\/bench-services\.sh ([\w -]+) && node /.exec(command);
    if (needed.length === 0) {
      expect(install).toBeNull();
      return;
    }
    expect(install?.[1]!.split(' ').sort()).toEqual(needed.sort());
  });
});

describe('the install logic', () => {
  it('lives in scripts/debian-packages.sh only, which npm test and the benchmarks both use', () => {
    const shellScripts = readdirSync(join(ROOT, 'scripts')).filter((file) => file.endsWith('.sh'));
    expect(shellScripts.filter((file) => read(`scripts/${file}`).includes('apt-get install'))).toEqual(['debian-packages.sh']);
    for (const user of ['scripts/test.sh', 'scripts/bench-services.sh']) {
      expect([user, /^source scripts\/debian-packages\.sh$/m.test(read(user)), /^ensure_debian_packages /m.test(read(user))]).toEqual([user, true, true]);
    }
  });

  it('tells a missing package from a present one without installing anything', () => {
    const present = (pkg: string, path: string) => {
      try {
        execFileSync('bash', ['-c', `source scripts/debian-packages.sh && debian_package_present ${pkg}`], { cwd: ROOT, env: { PATH: path } });
        return true;
      } catch {
        return false;
      }
    };
    // kcat is found on the PATH only: an empty PATH hides it.
    expect(present('kcat', '/nonexistent')).toBe(false);
  });
});
