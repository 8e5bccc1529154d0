import { api, session } from '../api.js';
import { h, fill } from '../dom.js';

/** The join code of a join link's screen ("#/leagues?join=K7PX2M"), else null. */
function joinCode(page) {
  const [path, query = ''] = (page ?? '').split('?');
  return path === '#/leagues' ? new URLSearchParams(query).get('join') || null : null;
}

/** Log in or register; both end with a token in sessionStorage, then open the page the
 * visitor had opened (a join link joins its league), else the portfolio or the market. */
export async function loginView(root, context) {
  let mode = 'login';
  const error = h('p', { class: 'error', role: 'alert', hidden: true });
  const username = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true, minlength: 3, maxlength: 32 });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true, minlength: 8, maxlength: 128 });
  const submit = h('button', { type: 'submit', id: 'auth-submit' }, 'Log in');
  const title = h('h1', {}, 'Log in');
  const switcher = h('button', { type: 'button', class: 'link', id: 'auth-switch' }, 'New here? Create an account');
  const hint = h('p', { class: 'hint', hidden: true }, 'Usernames are 3–32 letters, digits, dots, dashes or underscores; passwords 8–128 characters.');

  switcher.addEventListener('click', () => {
    mode = mode === 'login' ? 'register' : 'login';
    title.textContent = mode === 'login' ? 'Log in' : 'Create an account';
    submit.textContent = mode === 'login' ? 'Log in' : 'Create account';
    switcher.textContent = mode === 'login' ? 'New here? Create an account' : 'Have an account? Log in';
    password.autocomplete = mode === 'login' ? 'current-password' : 'new-password';
    hint.hidden = mode === 'login';
    error.hidden = true;
  });

  const code = joinCode(context.destination);
  const why = code ? h('p', { class: 'hint', id: 'auth-why' },
    `Log in, or create an account if you are new here, to join the league with the code ${code}. You join it as soon as you are in.`) : null;
  const form = h('form', { class: 'card narrow', id: 'auth-form' },
    title, why,
    h('label', { for: 'username' }, 'Username'), username,
    h('label', { for: 'password' }, 'Password'), password,
    hint, error, submit, switcher);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    error.hidden = true;
    try {
      const path = mode === 'login' ? '/api/auth/login' : '/api/auth/register';
      const answer = await api(path, { method: 'POST', body: { username: username.value.trim(), password: password.value } });
      session.save(answer);
      context.proceed(mode === 'login' ? '#/portfolio' : '#/market');
    } catch (problem) {
      error.textContent = problem.status === 401 ? 'That username and password do not match.' : problem.message;
      error.hidden = false;
      submit.disabled = false;
    }
  });
  fill(root, h('section', { class: 'login' },
    h('p', { class: 'tagline' }, 'Learn the stock market with virtual cash at real prices.'), form));
  username.focus();
}
