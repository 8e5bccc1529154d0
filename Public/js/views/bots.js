// My bots (#/bots): bot players of the caller's own — each with its own portfolio,
// trading only through API keys — their keys (a new key's secret is shown once), seats
// in leagues by join code, and deleting them. Everything shown comes from the server:
// GET /api/bots, GET /api/api-keys and, for league names, GET /api/leagues.
import { api } from '../api.js';
import { h, fill, confirmAction, errorLine, onSubmitShowing, whenText } from '../dom.js';

/**
 * What the page shows, and how it draws itself again: `bots`, `keys` and `leagues` as the
 * server last sent them, the list they are drawn into, and `secret` — a new key's secret,
 * which lives only here, in this drawing of the page: a reload or another page forgets it
 * (the server keeps only its hash).
 */
function botsPage(root, context) {
  const page = {
    root, context, secret: null, bots: [], keys: [], leagues: [],
    list: h('div', { id: 'bots' }),
    async load() {
      [page.bots, page.keys, page.leagues] = await Promise.all([api('/api/bots'), api('/api/api-keys'), api('/api/leagues')]);
    },
    /** Loads again and draws; a failure is said at the top of the page. */
    async reload() {
      try {
        await page.load();
      } catch (problem) {
        context.flash(problem.message, 'error');
        return;
      }
      if (context.current()) page.draw();
    },
    draw() {
      fill(page.list, page.bots.length === 0
        ? h('p', { class: 'empty', id: 'no-bots' }, 'You have no bots yet: create one above.')
        : h('ul', { class: 'bots' }, page.bots.map((bot) => botCard(page, bot))));
    },
  };
  return page;
}

/** Which portfolio of a bot this is, as the server says (openapi.yaml `Bot`). */
function botPortfolioKind(portfolio) {
  return portfolio.kind;
}

/** A portfolio of a bot in words: its personal one, or a league's by name (the caller's
 * leagues are known by name; another league by its number). */
function botPortfolioName(page, portfolio) {
  if (botPortfolioKind(portfolio) === 'personal') return 'Personal portfolio';
  const league = page.leagues.find((l) => l.id === portfolio.leagueId);
  return league ? `League: ${league.name}` : `League #${portfolio.leagueId}`;
}

function botPortfolioLabel(page, bot, portfolioId) {
  const portfolio = bot.portfolios.find((p) => p.id === portfolioId);
  return portfolio ? botPortfolioName(page, portfolio) : `Portfolio ${portfolioId} (closed)`;
}

/** Creating a bot: its username; the server's refusal in its words. */
function createForm(page) {
  const createError = errorLine('bot-error');
  const name = h('input', {
    id: 'bot-name', required: true, autocomplete: 'off', spellcheck: 'false', maxlength: 32, 'aria-describedby': 'bot-name-hint',
  });
  const create = h('form', { class: 'card', id: 'bot-form' },
    h('h2', {}, 'Create a bot'),
    h('label', { for: 'bot-name' }, 'Its username'), name,
    h('p', { class: 'hint', id: 'bot-name-hint' }, '3–32 letters, digits, dots, dashes or underscores, like any username.'),
    createError, h('button', { type: 'submit', class: 'primary' }, 'Create bot'));
  onSubmitShowing(create, createError, async () => {
    const bot = await api('/api/bots', { method: 'POST', body: { name: name.value.trim() } });
    name.value = '';
    page.context.flash(`Bot “${bot.username}” created, with a portfolio of its own. Make it a key to trade.`);
    await page.reload();
  });
  return create;
}

function aboutBots() {
  return h('section', { class: 'card', id: 'bots-about' },
    h('h2', {}, 'What a bot is'),
    h('p', {}, 'A bot is a player of your own making: it has its own portfolio, shows in league standings marked as a bot with your name, and trades only through API keys — Alpaca\'s Trading API at ',
      h('code', {}, `${window.location.origin}/v2`), '. It never logs in.'),
    h('p', { class: 'hint' }, 'Seat it in a league with the league\'s join code: the league\'s host decides whether bots play there.'));
}

/** One of a bot's keys, with Revoke after a confirmation. */
function keyItem(page, bot, key) {
  const { context } = page;
  const revoke = h('button', {
    type: 'button', class: 'danger small', dataset: { revoke: key.keyId }, 'aria-label': `Revoke key ${key.keyId}`,
    onclick: async () => {
      if (!confirmAction(`Revoke the key ${key.keyId} of “${bot.username}”? Programs using it stop working at once.`)) return;
      revoke.disabled = true;
      try {
        await api(`/api/api-keys/${encodeURIComponent(key.keyId)}`, { method: 'DELETE' });
        if (page.secret?.key.keyId === key.keyId) page.secret = null;
        context.flash(`Key ${key.keyId} revoked.`);
        await page.reload();
      } catch (problem) {
        revoke.disabled = false;
        context.flash(problem.message, 'error');
      }
    },
  }, 'Revoke');
  return h('li', { dataset: { key: key.keyId } },
    h('div', { class: 'key-text' },
      h('code', { class: 'code' }, key.keyId), key.name ? ` “${key.name}”` : null,
      h('span', { class: 'muted' }, ` · ${botPortfolioLabel(page, bot, key.portfolioId)} · made ${whenText(key.createdAt)} · `,
        key.lastUsedAt ? `last used ${whenText(key.lastUsedAt)}` : 'never used')),
    revoke);
}

/** The new key's secret, shown this once. */
function secretBox(page, bot, key) {
  const status = h('span', { class: 'hint', role: 'status' });
  const secretText = h('code', { class: 'code secret-text', id: 'new-key-secret-text' }, key.secret);
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
  return h('div', { class: 'secret', id: 'new-key-secret', role: 'alert' },
    h('h3', {}, `New key for ${botPortfolioLabel(page, bot, key.portfolioId).replace(/^Personal portfolio$/, 'its personal portfolio')}`),
    h('p', { class: 'warning' }, h('strong', {}, 'Copy the secret now: it will not be shown again.'),
      ' The server keeps only a fingerprint of it; if it is lost, revoke the key and make a new one.'),
    h('dl', { class: 'rules' },
      h('dt', {}, 'Key ID (APCA-API-KEY-ID)'), h('dd', {}, h('code', { class: 'code', id: 'new-key-id' }, key.keyId)),
      h('dt', {}, 'Secret (APCA-API-SECRET-KEY)'), h('dd', {}, secretText)),
    h('div', { class: 'actions' }, copy,
      h('button', { type: 'button', class: 'small', id: 'new-key-done', onclick: () => { page.secret = null; page.draw(); } }, 'I have copied it'),
      status));
}

/** A new key for one of the bot's portfolios, with an optional name: its secret is shown once. */
function newKeyForm(page, bot) {
  const id = bot.id;
  const keyError = errorLine();
  const choice = h('select', { id: `key-portfolio-${id}`, class: 'key-portfolio' },
    bot.portfolios.map((p) => h('option', { value: p.id }, botPortfolioName(page, p))));
  const keyName = h('input', { id: `key-name-${id}`, class: 'key-name', maxlength: 64, autocomplete: 'off', placeholder: 'optional' });
  const form = h('form', { class: 'inline new-key', 'aria-label': `New key for ${bot.username}` },
    h('div', {}, h('label', { for: `key-portfolio-${id}` }, 'Portfolio it trades'), choice),
    h('div', {}, h('label', { for: `key-name-${id}` }, 'Key name'), keyName),
    h('button', { type: 'submit', class: 'new-key-button' }, 'New key'));
  onSubmitShowing(form, keyError, async () => {
    const made = await api('/api/api-keys', {
      method: 'POST', body: { botId: id, portfolioId: Number(choice.value), name: keyName.value.trim() || undefined },
    });
    page.secret = { botId: id, key: made };
    page.context.flash('');
    await page.reload();
    page.root.querySelector('#new-key-secret')?.scrollIntoView({ block: 'nearest' });
  });
  return [form, keyError];
}

/** A seat in a league by its join code. */
function seatForm(page, bot) {
  const id = bot.id;
  const seatError = errorLine();
  const code = h('input', { id: `seat-code-${id}`, class: 'seat-code', required: true, autocomplete: 'off', spellcheck: 'false' });
  const seat = h('form', { class: 'inline seat', 'aria-label': `Seat ${bot.username} in a league` },
    h('div', {}, h('label', { for: `seat-code-${id}` }, 'League\'s join code'), code),
    h('button', { type: 'submit', class: 'seat-button' }, 'Seat'));
  onSubmitShowing(seat, seatError, async () => {
    const league = await api(`/api/leagues/join/${encodeURIComponent(code.value.trim())}`, { method: 'POST', body: { botId: id } });
    page.context.flash(`“${bot.username}” now plays in “${league.name}”.`);
    await page.reload();
  }, (problem) => (
    // The server's words, except where they speak to the caller as if they were the bot.
    problem.status === 404 ? 'No league has that code. Check it with the league\'s host.'
      : problem.code === 'already_member' ? `“${bot.username}” already plays in that league.`
        : problem.code === 'banned_from_league' ? `“${bot.username}” was removed from that league and cannot rejoin.` : problem.message));
  return [seat, seatError];
}

/** Delete, after a confirmation. */
function deleteButton(page, bot) {
  const { context } = page;
  const remove = h('button', {
    type: 'button', class: 'danger delete-bot', 'aria-label': `Delete ${bot.username}`,
    onclick: async () => {
      if (!confirmAction(`Delete the bot “${bot.username}”? Its keys stop working, it leaves its leagues, and its portfolios and their history are deleted. This cannot be undone.`)) return;
      remove.disabled = true;
      try {
        await api(`/api/bots/${bot.id}`, { method: 'DELETE' });
        if (page.secret?.botId === bot.id) page.secret = null;
        context.flash(`Bot “${bot.username}” deleted.`);
        await page.reload();
      } catch (problem) {
        remove.disabled = false;
        context.flash(problem.message, 'error');
      }
    },
  }, 'Delete bot');
  return remove;
}

/** One bot: its portfolios (a league's linked when the caller is in it too), its keys,
 * a new key, a seat in a league, and Delete. */
function botCard(page, bot) {
  const id = bot.id;
  const own = page.keys.filter((k) => k.botId === id);
  const known = (p) => botPortfolioKind(p) === 'league' && page.leagues.some((l) => l.id === p.leagueId);
  return h('li', { class: 'card bot', dataset: { bot: bot.username } },
    h('div', { class: 'heading' }, h('h2', {}, bot.username), h('div', { class: 'actions' }, deleteButton(page, bot))),
    h('p', { class: 'muted created' }, `Created ${whenText(bot.createdAt)}`),
    h('h3', { id: `bot-portfolios-${id}` }, 'Portfolios'),
    h('ul', { class: 'bot-portfolios', 'aria-labelledby': `bot-portfolios-${id}` }, bot.portfolios.map((p) => h('li', {},
      known(p) ? h('a', { href: `#/leagues/${p.leagueId}` }, botPortfolioName(page, p)) : botPortfolioName(page, p)))),
    h('h3', {}, 'API keys'),
    page.secret?.botId === id ? secretBox(page, bot, page.secret.key) : null,
    own.length === 0 ? h('p', { class: 'empty keys-empty' }, 'No keys yet: make one to let a program trade as this bot.')
      : h('ul', { class: 'keys' }, own.map((k) => keyItem(page, bot, k))),
    newKeyForm(page, bot),
    h('h3', {}, 'Seat in a league'),
    h('p', { class: 'hint' }, 'In a shared league it plays its personal portfolio; an isolated league gives it one of its own.'),
    seatForm(page, bot));
}

export async function botsView(root, context) {
  const page = botsPage(root, context);
  await page.load();
  if (!context.current()) return;
  page.draw();
  fill(root,
    h('h1', {}, 'My bots'),
    h('div', { class: 'columns' }, createForm(page), aboutBots()),
    h('h2', {}, 'Your bots'),
    page.list);
}
