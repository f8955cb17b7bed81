import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { api, request, session } from './api/http.js';

export interface User {
  id: string;
  email: string;
  nickname: string;
  tenant_id: string;
  is_superuser: boolean;
}

interface AuthState {
  user: User | undefined;
  /** Why the user was sent to the log-in page (e.g. an expired session). */
  notice: string | undefined;
  login(email: string, password: string): Promise<void>;
  signUp(email: string, nickname: string, password: string): Promise<void>;
  logout(): void;
}

const AuthContext = createContext<AuthState | undefined>(undefined);

export function useAuth(): AuthState {
  const ctx = useContext(AuthContext);
  if (!ctx) throw new Error('useAuth outside AuthProvider');
  return ctx;
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [user, setUser] = useState<User | undefined>();
  const [checking, setChecking] = useState(Boolean(session.token()));
  const [notice, setNotice] = useState<string>();

  useEffect(() => {
    if (!session.token()) return;
    api
      .get<User>('/users/me')
      .then(setUser, () => session.clear())
      .finally(() => setChecking(false));
  }, []);

  useEffect(
    () =>
      session.onUnauthorized((err) => {
        session.clear();
        setUser(undefined);
        setNotice(`You were logged out: ${err.message}`);
      }),
    [],
  );

  const login = useCallback(async (email: string, password: string) => {
    const res = await request<{ access_token: string }>('POST', '/auth/login', { body: { email, password } });
    session.set(res.data.access_token);
    setNotice(undefined);
    setUser(await api.get<User>('/users/me'));
  }, []);

  const signUp = useCallback(
    async (email: string, nickname: string, password: string) => {
      await api.post('/users', { email, nickname, password });
      await login(email, password);
    },
    [login],
  );

  const logout = useCallback(() => {
    session.clear();
    setUser(undefined);
    setNotice('You are logged out.');
  }, []);

  if (checking) return null;
  return <AuthContext.Provider value={{ user, notice, login, signUp, logout }}>{children}</AuthContext.Provider>;
}
