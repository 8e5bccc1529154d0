// Exact decimal strings, as the API sends money and prices ("10000.00", "187.4312").
// Arithmetic goes through BigInt at a fixed scale; nothing passes through floating point.

const SCALE = 8;

/** "12.5" → 1250000000n (the value × 10^8). Throws on anything but a plain decimal. */
export function scaled(text) {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(String(text).trim());
  if (!match) throw new Error(`not a decimal: ${text}`);
  const [, sign, whole, fraction = ''] = match;
  const digits = BigInt(whole + fraction.padEnd(SCALE, '0').slice(0, SCALE));
  return sign ? -digits : digits;
}

/** The decimal string of a scaled value, rounded half away from zero to `places`. */
export function unscaled(value, places = 2) {
  const negative = value < 0n;
  let magnitude = negative ? -value : value;
  const drop = 10n ** BigInt(SCALE - places);
  magnitude = (magnitude + drop / 2n) / drop;
  let digits = magnitude.toString().padStart(places + 1, '0');
  if (places > 0) digits = `${digits.slice(0, -places)}.${digits.slice(-places)}`;
  return (negative && magnitude !== 0n ? '-' : '') + digits;
}

/** price × quantity, exactly. */
export function times(price, quantity) {
  return unscaled(scaled(price) * BigInt(quantity), 2);
}

export function add(a, b) {
  return unscaled(scaled(a) + scaled(b), 2);
}

export function isNegative(text) {
  return scaled(text) < 0n;
}

export function compare(a, b) {
  const difference = scaled(a) - scaled(b);
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
}

/** "1234567.5" → "$1,234,567.50"; "-3.2" → "−$3.20". */
export function money(text, places = 2) {
  if (text === null || text === undefined) return '—';
  const fixed = unscaled(scaled(text), places);
  const negative = fixed.startsWith('-');
  const [whole, fraction] = (negative ? fixed.slice(1) : fixed).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '−' : ''}$${grouped}${fraction ? `.${fraction}` : ''}`;
}

/** A signed money change: "+$3.20" / "−$3.20". */
export function signedMoney(text) {
  if (text === null || text === undefined) return '—';
  const shown = money(text);
  return scaled(unscaled(scaled(text), 2)) > 0n ? `+${shown}` : shown;
}

/** A percent string from the API ("1.25") → "+1.25%". */
export function percent(text) {
  if (text === null || text === undefined) return '—';
  const fixed = unscaled(scaled(text), 2);
  return `${scaled(fixed) > 0n ? '+' : ''}${fixed.replace('-', '−')}%`;
}

/** A price: at least two decimals, up to four when the API gives them. */
export function price(text) {
  if (text === null || text === undefined) return '—';
  const fraction = String(text).split('.')[1] || '';
  return money(text, Math.min(Math.max(fraction.replace(/0+$/, '').length, 2), 4));
}

const CURRENCY_SIGNS = { USD: '$', EUR: '€', GBP: '£', JPY: '¥' };

/** The currencies offered by the currency switches (any with ECB rates works). */
export const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'CHF', 'CAD'];

/** Money in a currency: "€1,234.50", or "CHF 1,234.50" for a currency without a sign. */
export function inCurrency(text, currency = 'USD') {
  return signedIn(money(text), currency);
}

/** Money already shown in dollars ("+$3.20", "$101.0000") in `currency` instead. */
export function signedIn(shown, currency = 'USD') {
  if (!currency || currency === 'USD' || shown === '—') return shown;
  const sign = CURRENCY_SIGNS[currency];
  return shown.replace('$', sign ?? `${currency} `);
}

/** A decimal fraction from the API ("0.018480") as a signed percent: "+1.85%". */
export function fractionPercent(text) {
  if (text === null || text === undefined) return '—';
  return percent(unscaled(scaled(text) * 100n, 4));
}
