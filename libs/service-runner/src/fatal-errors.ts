/**
 * Ends the process, non-zero, on an error nothing handled: an uncaught exception or an
 * unhandled rejection leaves state no code path was written for, and a supervisor restarts a
 * process that exits (it cannot tell one that limps on). Node's defaults do the same, but any
 * library adding an 'uncaughtException' listener would turn them off; these listeners also say
 * what happened in the service's log first. A fatal V8 error (heap out of memory) is not an
 * exception: it aborts the process, which restoreCrashSignalDefaults (@sightline/clickhouse)
 * keeps possible while the embedded engine is loaded.
 */
export function exitOnFatalErrors(report: (error: unknown, origin: string) => void): void {
  const fail = (error: unknown, origin: string) => {
    try {
      report(error, origin);
    } finally {
      process.exit(1);
    }
  };
  process.on('uncaughtException', (error, origin) => fail(error, origin));
  process.on('unhandledRejection', (reason) => fail(reason, 'unhandledRejection'));
}
