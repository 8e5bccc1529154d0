// The player's account (#/account): who they are (a class's student by the name their
// host gave them), a new password, everything of theirs as one JSON file, and erasing
// the account for good after typing its password.
import { api, saveDownload, session } from '../api.js';
import { h, fill, failure, dateText, errorLine, onSubmitShowing, showModalForm } from '../dom.js';
import { live } from '../live.js';

export async function accountView(root, context) {
  const me = await api('/api/me');
  if (!context.current()) return;
  session.remember({ displayName: me.displayName, managedBy: me.managedBy });
  fill(root,
    h('h1', {}, 'Your account'),
    h('div', { class: 'grid account' },
      whoPart(me), passwordForm(context), dataPart(me), erasePart(me, context)));
}

function whoPart(me) {
  return h('section', { class: 'card', id: 'who', 'aria-labelledby': 'who-title' },
    h('h2', { id: 'who-title' }, me.displayName ? h('span', { id: 'account-name' }, me.displayName) : 'You'),
    h('dl', { class: 'rules' },
      h('dt', {}, 'Username'), h('dd', { id: 'account-username', class: 'code' }, me.username),
      h('dt', {}, 'Since'), h('dd', {}, dateText(me.createdAt))),
    me.managedBy ? h('p', { class: 'hint', id: 'account-managed' },
      'Your teacher made this login for your class. If you forget your password, ask them for a new one.') : null);
}

/** A new password (`POST /api/auth/password`): other sessions end; this one goes on. */
function passwordForm(context) {
  const current = h('input', { id: 'password-current', type: 'password', autocomplete: 'current-password', required: true });
  const next = h('input', { id: 'password-new', type: 'password', autocomplete: 'new-password', required: true, minlength: 8, maxlength: 128 });
  const error = errorLine('password-error');
  const form = h('form', { class: 'card', id: 'password-form', 'aria-labelledby': 'password-title' },
    h('h2', { id: 'password-title' }, 'Change password'),
    h('label', { for: 'password-current' }, 'Current password'), current,
    h('label', { for: 'password-new' }, 'New password (8–128 characters)'), next,
    error, h('button', { type: 'submit' }, 'Change password'));
  onSubmitShowing(form, error, async () => {
    const answer = await api('/api/auth/password', { method: 'POST', body: { currentPassword: current.value, newPassword: next.value } });
    session.save({ token: answer.token, user: { ...session.user, ...answer.user } });
    live.start();
    current.value = '';
    next.value = '';
    context.flash('Your password is changed; you are logged out everywhere else.');
  }, (problem) => (problem.status === 403 ? 'That is not your current password: nothing was changed.' : problem.message));
  return form;
}

/** Everything of the account as one JSON file (`GET /api/me/export`), saved by the browser. */
function dataPart(me) {
  const status = h('div', { id: 'export-status', role: 'status' });
  const button = h('button', { type: 'button', id: 'export-download' }, 'Download my data');
  button.addEventListener('click', async () => {
    button.disabled = true;
    status.textContent = 'Preparing your data…';
    try {
      const name = await saveDownload('/api/me/export', `mockstock-account-${me.id}.json`, 'application/json');
      status.textContent = `Downloaded ${name}.`;
    } catch (problem) {
      fill(status, failure(problem));
    } finally {
      button.disabled = false;
    }
  });
  return h('section', { class: 'card', id: 'my-data', 'aria-labelledby': 'my-data-title' },
    h('h2', { id: 'my-data-title' }, 'Your data'),
    h('p', { class: 'hint' }, 'Your account, portfolios, trades, orders, cash movements, notifications, API keys (never their secrets), bots, leagues and achievements, as one JSON file.'),
    button, status);
}

/** Erasing the account (`DELETE /api/me` with its password), after a dialog that asks
 * for the password; then the login page says so. */
function erasePart(me, context) {
  const open = () => {
    const password = h('input', { id: 'erase-password', type: 'password', autocomplete: 'current-password', required: true });
    const error = h('p', { class: 'error', role: 'alert', id: 'erase-error', hidden: true });
    const dialog = h('dialog', { id: 'erase-dialog', 'aria-labelledby': 'erase-title' });
    const form = h('form', { method: 'dialog' },
      h('h2', { id: 'erase-title' }, 'Erase your account?'),
      h('p', {}, `Everything of ${me.displayName ?? me.username} is deleted for good: portfolios, trades, orders, notes, bots and keys; leagues you own are deleted for their members too. This cannot be undone.`),
      h('label', { for: 'erase-password' }, 'Your password'), password,
      error,
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'danger', id: 'erase-confirm' }, 'Erase my account'),
        h('button', { type: 'button', id: 'erase-cancel', onclick: () => dialog.close() }, 'Cancel')));
    showModalForm(dialog, form, error, password, async () => {
      // A wrong password is refused in the server's words, and nothing is erased.
      await api('/api/me', { method: 'DELETE', body: { password: password.value } });
      dialog.close();
      live.stop();
      session.clear();
      context.flash('Your account was erased, with everything in it.', 'info', true);
      window.location.hash = '#/login';
    });
  };
  return h('section', { class: 'card danger-zone', id: 'erase', 'aria-labelledby': 'erase-part-title' },
    h('h2', { id: 'erase-part-title' }, 'Erase your account'),
    h('p', { class: 'hint' }, 'Deletes the account and everything in it for good; the username is free again. Download your data first if you want to keep it.'),
    h('button', { type: 'button', class: 'danger', id: 'erase-open', onclick: open }, 'Erase my account…'));
}
