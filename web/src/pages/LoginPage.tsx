import { useState, type FormEvent } from 'react';
import { useAuth } from '../auth.js';
import { ErrorMessage, Notice, SubmitButton, TextField } from '../components/ui.js';
import { useAction } from '../hooks.js';
import { Link } from '../router.js';

export function LoginPage({ mode }: { mode: 'login' | 'signup' }) {
  const { login, signUp, notice } = useAuth();
  const [email, setEmail] = useState('');
  const [nickname, setNickname] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  const signup = mode === 'signup';

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(() => (signup ? signUp(email, nickname, password) : login(email, password)));
  };

  return (
    <main className="auth-page" id="main">
      <form className="card auth-card" onSubmit={submit} aria-labelledby="auth-title">
        <p className="brand">Cairn</p>
        <h1 id="auth-title">{signup ? 'Create an account' : 'Log in'}</h1>
        {notice && !signup && <Notice>{notice}</Notice>}
        <TextField label="Email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        {signup && <TextField label="Name" autoComplete="nickname" required value={nickname} onChange={(e) => setNickname(e.target.value)} />}
        <TextField label="Password" type="password" autoComplete={signup ? 'new-password' : 'current-password'} required value={password} onChange={(e) => setPassword(e.target.value)} />
        <ErrorMessage error={error} />
        <SubmitButton label={signup ? 'Sign up' : 'Log in'} busy={busy} busyLabel="Please wait…" />
        <p className="muted">
          {signup ? (
            <>
              Already have an account? <Link to="/login">Log in</Link>
            </>
          ) : (
            <>
              New here? <Link to="/signup">Create an account</Link>
            </>
          )}
        </p>
      </form>
    </main>
  );
}
