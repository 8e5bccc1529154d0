// My bots (#/bots): bot players of the caller's own — each with its own portfolio,
// trading only through API keys — their keys (a new key's secret is shown once), seats
// in leagues by join code, and deleting them. Everything shown comes from the server:
// GET /api/bots, GET /api/api-keys and, for league names, GET /api/leagues.
import { api } from '../api.js';
import { h, fill, confirmAction, onSubmit } from '../dom.js';

function dateTime(value) {
  return new Date(value).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export async function botsView(root, context) {
  // A new key's secret lives only here, in this drawing of the page: a reload or another
  // page forgets it (the server keeps only its hash).
  let secret = null;
  let bots = [];
  let keys = [];
  let leagues = [];

  async function load() {
    [bots, keys, leagues] = await Promise.all([api('/api/bots'), api('/api/api-keys'), api('/api/leagues')]);
  }
  /** Loads again and draws; a failure is said at the top of the page. */
  async function reload() {
    try {
      await load();
    } catch (problem) {
      context.flash(problem.message, 'error');
      return;
    }
    if (context.current()) draw();
  }

  await load();
  if (!context.current()) return;

  /** A portfolio of a bot in words: its personal one, or a league's by name (the caller's
   * leagues are known by name; another league by its number). */
  function portfolioName(portfolio) {
    if (portfolio.leagueId === null || portfolio.leagueId === undefined) return 'Personal portfolio';
    const league = leagues.find((l) => l.id === portfolio.leagueId);
    return league ? `League: ${league.name}` : `League #${portfolio.leagueId}`;
  }
  function portfolioLabel(bot, portfolioId) {
    const portfolio = bot.portfolios.find((p) => p.id === portfolioId);
    return portfolio ? portfolioName(portfolio) : `Portfolio ${portfolioId} (closed)`;
  }

  // Creating a bot.
  const createError = h('p', { class: 'error', role: 'alert', id: 'bot-error', hidden: true });
  const name = h('input', {
    id: 'bot-name', required: true, autocomplete: 'off', spellcheck: 'false', maxlength: 32, 'aria-describedby': 'bot-name-hint',
  });
  const create = h('form', { class: 'card', id: 'bot-form' },
    h('h2', {}, 'Create a bot'),
    h('label', { for: 'bot-name' }, 'Its username'), name,
    h('p', { class: 'hint', id: 'bot-name-hint' }, '3–32 letters, digits, dots, dashes or underscores, like any username.'),
    createError, h('button', { type: 'submit', class: 'primary' }, 'Create bot'));
  onSubmit(create, async () => {
    createError.hidden = true;
    const bot = await api('/api/bots', { method: 'POST', body: { name: name.value.trim() } });
    name.value = '';
    context.flash(`Bot “${bot.username}” created, with a portfolio of its own. Make it a key to trade.`);
    await reload();
  }, (problem) => {
    createError.textContent = problem.message;
    createError.hidden = false;
  });

  const about = h('section', { class: 'card', id: 'bots-about' },
    h('h2', {}, 'What a bot is'),
    h('p', {}, 'A bot is a player of your own making: it has its own portfolio, shows in league standings marked as a bot with your name, and trades only through API keys — Alpaca\'s Trading API at ',
      h('code', {}, `${window.location.origin}/v2`), '. It never logs in.'),
    h('p', { class: 'hint' }, 'Seat it in a league with the league\'s join code: the league\'s host decides whether bots play there.'));

  const list = h('div', { id: 'bots' });

  function keyItem(bot, key) {
    const revoke = h('button', {
      type: 'button', class: 'danger small', dataset: { revoke: key.keyId }, 'aria-label': `Revoke key ${key.keyId}`,
      onclick: async () => {
        if (!confirmAction(`Revoke the key ${key.keyId} of “${bot.username}”? Programs using it stop working at once.`)) return;
        revoke.disabled = true;
        try {
          await api(`/api/api-keys/${encodeURIComponent(key.keyId)}`, { method: 'DELETE' });
          if (secret?.key.keyId === key.keyId) secret = null;
          context.flash(`Key ${key.keyId} revoked.`);
          await reload();
        } catch (problem) {
          revoke.disabled = false;
          context.flash(problem.message, 'error');
        }
      },
    }, 'Revoke');
    return h('li', { dataset: { key: key.keyId } },
      h('div', { class: 'key-text' },
        h('code', { class: 'code' }, key.keyId), key.name ? ` “${key.name}”` : null,
        h('span', { class: 'muted' }, ` · ${portfolioLabel(bot, key.portfolioId)} · made ${dateTime(key.createdAt)} · `,
          key.lastUsedAt ? `last used ${dateTime(key.lastUsedAt)}` : 'never used')),
      revoke);
  }

  /** The new key's secret, shown this once. */
  function secretBox(bot, key) {
    const status = h('span', { class: 'hint', role: 'status' });
    const copy = h('button', {
      type: 'button', class: 'small',
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(key.secret);
          status.textContent = 'Copied.';
        } catch {
          window.getSelection()?.selectAllChildren(secretText);
          status.textContent = 'Selected: copy it with your keyboard or menu.';
        }
      },
    }, 'Copy secret');
    const secretText = h('code', { class: 'code secret-text', id: 'new-key-secret-text' }, key.secret);
    return h('div', { class: 'secret', id: 'new-key-secret', role: 'alert' },
      h('h3', {}, `New key for ${portfolioLabel(bot, key.portfolioId).replace(/^Personal portfolio$/, 'its personal portfolio')}`),
      h('p', { class: 'warning' }, h('strong', {}, 'Copy the secret now: it will not be shown again.'),
        ' The server keeps only a fingerprint of it; if it is lost, revoke the key and make a new one.'),
      h('dl', { class: 'rules' },
        h('dt', {}, 'Key ID (APCA-API-KEY-ID)'), h('dd', {}, h('code', { class: 'code', id: 'new-key-id' }, key.keyId)),
        h('dt', {}, 'Secret (APCA-API-SECRET-KEY)'), h('dd', {}, secretText)),
      h('div', { class: 'actions' }, copy,
        h('button', { type: 'button', class: 'small', id: 'new-key-done', onclick: () => { secret = null; draw(); } }, 'I have copied it'),
        status));
  }

  function botCard(bot) {
    const id = bot.id;
    const own = keys.filter((k) => k.botId === id);

    const keyError = h('p', { class: 'error', role: 'alert', hidden: true });
    const choice = h('select', { id: `key-portfolio-${id}`, class: 'key-portfolio' },
      bot.portfolios.map((p) => h('option', { value: p.id }, portfolioName(p))));
    const keyName = h('input', { id: `key-name-${id}`, class: 'key-name', maxlength: 64, autocomplete: 'off', placeholder: 'optional' });
    const newKey = h('form', { class: 'inline new-key', 'aria-label': `New key for ${bot.username}` },
      h('div', {}, h('label', { for: `key-portfolio-${id}` }, 'Portfolio it trades'), choice),
      h('div', {}, h('label', { for: `key-name-${id}` }, 'Key name'), keyName),
      h('button', { type: 'submit', class: 'new-key-button' }, 'New key'));
    onSubmit(newKey, async () => {
      keyError.hidden = true;
      const made = await api('/api/api-keys', {
        method: 'POST', body: { botId: id, portfolioId: Number(choice.value), name: keyName.value.trim() || undefined },
      });
      secret = { botId: id, key: made };
      context.flash('');
      await reload();
      root.querySelector('#new-key-secret')?.scrollIntoView({ block: 'nearest' });
    }, (problem) => {
      keyError.textContent = problem.message;
      keyError.hidden = false;
    });

    const seatError = h('p', { class: 'error', role: 'alert', hidden: true });
    const code = h('input', { id: `seat-code-${id}`, class: 'seat-code', required: true, autocomplete: 'off', spellcheck: 'false' });
    const seat = h('form', { class: 'inline seat', 'aria-label': `Seat ${bot.username} in a league` },
      h('div', {}, h('label', { for: `seat-code-${id}` }, 'League\'s join code'), code),
      h('button', { type: 'submit', class: 'seat-button' }, 'Seat'));
    onSubmit(seat, async () => {
      seatError.hidden = true;
      const league = await api(`/api/leagues/join/${encodeURIComponent(code.value.trim())}`, { method: 'POST', body: { botId: id } });
      context.flash(`“${bot.username}” now plays in “${league.name}”.`);
      await reload();
    }, (problem) => {
      // The server's words, except where they speak to the caller as if they were the bot.
      seatError.textContent = problem.status === 404 ? 'No league has that code. Check it with the league\'s host.'
        : problem.code === 'already_member' ? `“${bot.username}” already plays in that league.`
          : problem.code === 'banned_from_league' ? `“${bot.username}” was removed from that league and cannot rejoin.` : problem.message;
      seatError.hidden = false;
    });

    const remove = h('button', {
      type: 'button', class: 'danger delete-bot', 'aria-label': `Delete ${bot.username}`,
      onclick: async () => {
        if (!confirmAction(`Delete the bot “${bot.username}”? Its keys stop working, it leaves its leagues, and its portfolios and their history are deleted. This cannot be undone.`)) return;
        remove.disabled = true;
        try {
          await api(`/api/bots/${id}`, { method: 'DELETE' });
          if (secret?.botId === id) secret = null;
          context.flash(`Bot “${bot.username}” deleted.`);
          await reload();
        } catch (problem) {
          remove.disabled = false;
          context.flash(problem.message, 'error');
        }
      },
    }, 'Delete bot');

    return h('li', { class: 'card bot', dataset: { bot: bot.username } },
      h('div', { class: 'heading' }, h('h2', {}, bot.username), h('div', { class: 'actions' }, remove)),
      h('p', { class: 'muted created' }, `Created ${dateTime(bot.createdAt)}`),
      h('h3', { id: `bot-portfolios-${id}` }, 'Portfolios'),
      h('ul', { class: 'bot-portfolios', 'aria-labelledby': `bot-portfolios-${id}` }, bot.portfolios.map((p) => h('li', {},
        p.leagueId === null || !leagues.some((l) => l.id === p.leagueId) ? portfolioName(p)
          : h('a', { href: `#/leagues/${p.leagueId}` }, portfolioName(p))))),
      h('h3', {}, 'API keys'),
      secret?.botId === id ? secretBox(bot, secret.key) : null,
      own.length === 0 ? h('p', { class: 'empty keys-empty' }, 'No keys yet: make one to let a program trade as this bot.')
        : h('ul', { class: 'keys' }, own.map((k) => keyItem(bot, k))),
      newKey, keyError,
      h('h3', {}, 'Seat in a league'),
      h('p', { class: 'hint' }, 'In a shared league it plays its personal portfolio; an isolated league gives it one of its own.'),
      seat, seatError);
  }

  function draw() {
    fill(list, bots.length === 0
      ? h('p', { class: 'empty', id: 'no-bots' }, 'You have no bots yet: create one above.')
      : h('ul', { class: 'bots' }, bots.map(botCard)));
  }

  draw();
  fill(root,
    h('h1', {}, 'My bots'),
    h('div', { class: 'columns' }, create, about),
    h('h2', {}, 'Your bots'),
    list);
}
