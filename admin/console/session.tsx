/**
 * The signed-in session shared by every page: the REST client for the key, sign-out, and the
 * error banner's setter (so any page shows a failure the same way).
 */
import { createContext, useContext } from 'react';
import type { Api } from './api.ts';

/** What {@link useSession} gives a page. */
export interface Session {
  api: Api;
  signOut: () => void;
  /** Shows `err` (an ApiError's server message, or any error) in the banner; null clears it. */
  reportError: (err: unknown) => void;
}

/** Provided by app.tsx once signed in. */
export const SessionContext = createContext<Session | null>(null);

/** The current session; only under a signed-in app. */
export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in console');
  return s;
}

/** The sessionStorage entry holding the API key (gone when the tab closes). */
export const KEY_STORAGE = 'svc-console-api-key';
