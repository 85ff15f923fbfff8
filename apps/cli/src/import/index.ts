export { runImport, type ImportOptions, type ImportProgress, type ImportResult } from './import-run';
export { parseImportArgs, IMPORT_USAGE, UsageError } from './import-options';
export { ImportReport } from './import-report';
export { stableEventUuid } from './event-check';
export { estimateProgress, type ProgressEstimate } from './progress-estimate';
