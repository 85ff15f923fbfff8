export * from './hogql-compiler';
export {
  checkCall,
  findFunction,
  findHogQLAggregation,
  findHogQLFunction,
  HOGQL_AGGREGATIONS,
  HOGQL_FUNCTIONS,
  MAX_BUILT_ARRAY_ELEMENTS,
  MAX_COLLECTED_ELEMENTS,
  MAX_VARIADIC_ARGUMENTS,
  unsupportedFunction,
  type FoundFunction,
  type FunctionBound,
  type HogQLFunction,
} from './functions';
export * from './select';
