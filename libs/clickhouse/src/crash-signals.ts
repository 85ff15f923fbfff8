/**
 * The signals a process dies of when it cannot go on: V8's fatal errors (the JavaScript heap out
 * of memory among them) end in abort(), native faults raise the others.
 */
const CRASH_SIGNALS = ['SIGABRT', 'SIGSEGV', 'SIGBUS', 'SIGILL', 'SIGFPE', 'SIGTRAP', 'SIGSYS'] as const;

/**
 * Gives the crash signals back their default action: the process ends at once, with the signal
 * as its status. The embedded ClickHouse engine (chdb) installs handlers of its own for them when
 * its session opens, and those never return: a process whose heap ran out stayed alive, serving
 * nothing, and a supervisor waiting for it to exit never restarted it.
 *
 * Node has no call for SIG_DFL, but libuv restores the default action when the last listener
 * of a signal is removed, so a listener is added and removed at once.
 */
export function restoreCrashSignalDefaults(): void {
  const listener = () => undefined;
  for (const signal of CRASH_SIGNALS) {
    process.on(signal, listener);
    process.removeListener(signal, listener);
  }
}
