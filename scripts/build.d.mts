export function buildIfNeeded(options?: { force?: boolean }): Promise<boolean>;
