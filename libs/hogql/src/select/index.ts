export { compileSelect, quoteIdentifier, type CompiledSelect, type CompileSelectOptions, type PlaceholderValue } from './select-compiler';
export { HOGQL_TABLES } from './select-tables';
