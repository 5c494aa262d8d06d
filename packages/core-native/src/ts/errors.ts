/** Thrown for a bad flag, environment variable or option value. */
export class GuardConfigError extends Error {
  readonly code = 'MATE_GUARD_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'GuardConfigError';
  }
}
