/** A UUID in its canonical text form (8-4-4-4-12 hexadecimal digits, either case), any version. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
