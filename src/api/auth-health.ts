import type { ApiClientEvents } from './client-events.js';

export type AuthState = { state: 'unknown' } | { state: 'ok'; at: Date } | { state: 'lost'; at: Date; message: string };

/**
 * What the client last learned about its credentials: an authenticated answer (ok) or a token
 * that could not be obtained or refreshed (lost). `unknown` until the first call, so a restart
 * neither raises nor clears an "authentication lost" notification before it knows.
 */
export class AuthHealth {
  private current: AuthState = { state: 'unknown' };

  constructor(private readonly now: () => Date = () => new Date()) {}

  get state(): AuthState {
    return this.current;
  }

  events(): Pick<ApiClientEvents, 'onAuthenticated' | 'onAuthFailed'> {
    return {
      onAuthenticated: () => {
        this.current = { state: 'ok', at: this.now() };
      },
      onAuthFailed: ({ message }) => {
        this.current = { state: 'lost', at: this.now(), message };
      },
    };
  }
}
