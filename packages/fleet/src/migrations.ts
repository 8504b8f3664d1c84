export const LATEST_SCHEMA_VERSION = 1;
