/**
 * The signed-in session: the API key (sessionStorage only: it goes when the tab closes), the account
 * shown in the header, and the latest rate-limit state. A tiny observable store; screens read it with
 * useSession() and call the API through api().
 */
import { useEffect, useState } from 'preact/hooks';
import type { Account, RateLimitState } from '../lib/api-types.js';
import { ApiError, createApiClient, type ApiClient } from './client.js';

const STORAGE_KEY = 'pressroom.apiKey';

export interface SessionState {
  apiKey: string | null;
  account: Account | null;
  rateLimit: RateLimitState | null;
  /** Why the user was signed out, shown on the sign-in screen. */
  notice: string | null;
}

type Listener = (state: SessionState) => void;

function storedKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

let state: SessionState = { apiKey: storedKey(), account: null, rateLimit: null, notice: null };
let client: ApiClient | null = null;
const listeners = new Set<Listener>();

function setState(patch: Partial<SessionState>): void {
  state = { ...state, ...patch };
  for (const listener of listeners) listener(state);
}

function clientFor(apiKey: string): ApiClient {
  return createApiClient(apiKey, {
    onRateLimit: (rateLimit) => {
      if (state.apiKey === apiKey) setState({ rateLimit });
    },
    onUnauthorized: () => {
      if (state.apiKey === apiKey)
        signOut('The API key stopped working (revoked or invalid). Sign in with another key.');
    },
  });
}

/** The current state, outside components. */
export const getSession = (): SessionState => state;

/** The API client of the signed-in key. */
export function api(): ApiClient {
  if (!state.apiKey) throw new ApiError(401, { error: 'UNAUTHORIZED', message: 'Not signed in.' });
  client ??= clientFor(state.apiKey);
  return client;
}

/** Checks the key with GET /v1/account and keeps it for this tab. Throws ApiError when refused. */
export async function signIn(apiKey: string): Promise<void> {
  let rateLimit: RateLimitState | null = null;
  const probe = createApiClient(apiKey, { onRateLimit: (r) => (rateLimit = r), onUnauthorized: () => undefined });
  const account = await probe.json<Account>('GET', '/v1/account');
  try {
    sessionStorage.setItem(STORAGE_KEY, apiKey);
  } catch {
    // Storage disabled: the session lasts as long as the page.
  }
  client = clientFor(apiKey);
  setState({ apiKey, account, rateLimit, notice: null });
}

/** Forgets the key. */
export function signOut(notice: string | null = null): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing stored
  }
  client = null;
  setState({ apiKey: null, account: null, rateLimit: null, notice });
}

/** Reloads the account (credits, plan) for the header. */
export async function refreshAccount(): Promise<void> {
  if (!state.apiKey) return;
  const account = await api().json<Account>('GET', '/v1/account');
  setState({ account });
}

/** Sets the credit balance a generation response reported. */
export function setCredits(credits: number): void {
  if (state.account) setState({ account: { ...state.account, credits } });
}

/** Subscribes a component to the session. */
export function useSession(): SessionState {
  const [current, setCurrent] = useState(state);
  useEffect(() => {
    listeners.add(setCurrent);
    setCurrent(state);
    return () => {
      listeners.delete(setCurrent);
    };
  }, []);
  return current;
}
