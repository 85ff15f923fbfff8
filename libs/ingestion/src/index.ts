export * from './capture-payload';
export * from './timestamp';
export * from './ingest-message';
export * from './event-schema';
export * from './bus-message-size';
export * from './bus-format';
export * from './bus-time';
