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

const formats = new Map();

/** Intl's writing of `currency` (cached: making one is slow): its sign or code, English
 * grouping, and `places` decimals (default: the currency's own minor units). */
function currencyFormat(currency, places) {
  currency ||= 'USD';
  const key = `${currency}/${places}`;
  if (!formats.has(key)) {
    const digits = places === undefined ? {} : { minimumFractionDigits: places, maximumFractionDigits: places };
    formats.set(key, new Intl.NumberFormat('en-US', { style: 'currency', currency, ...digits }));
  }
  return formats.get(key);
}

/** How many decimals a currency is written with: 2 for dollars and euros, 0 for yen. */
export function minorUnits(currency) {
  return currencyFormat(currency).resolvedOptions().maximumFractionDigits;
}

/**
 * Every amount of money the client shows is written here: rounded exactly (BigInt, half
 * away from zero) to `places` decimals — by default the currency's minor units — and only
 * then handed, as that decimal string, to Intl for the currency's sign and the grouping.
 *   formatMoney('52866.23', 'JPY') → "¥52,866"; formatMoney('-3.2') → "−$3.20";
 *   { sign: true } → "+€1,234.50"; { code: true } → "52,866 JPY".
 */
export function formatMoney(text, currency, { places, sign = false, code = false } = {}) {
  if (text === null || text === undefined) return '—';
  currency ||= 'USD';
  const digits = places ?? minorUnits(currency);
  const fixed = unscaled(scaled(text), digits);
  const negative = fixed.startsWith('-');
  const magnitude = negative ? fixed.slice(1) : fixed;
  const prefix = negative ? '−' : sign && /[1-9]/.test(magnitude) ? '+' : '';
  if (!code) return prefix + currencyFormat(currency, digits).format(magnitude);
  const number = currencyFormat(currency, digits).formatToParts(magnitude)
    .filter((part) => !['currency', 'literal'].includes(part.type)).map((part) => part.value).join('');
  return `${prefix}${number} ${currency}`;
}

/** Dollars: "1234567.5" → "$1,234,567.50"; "-3.2" → "−$3.20". */
export function money(text, places = 2) {
  return formatMoney(text, 'USD', { places });
}

/** A signed money change: "+$3.20" / "−$3.20". */
export function signedMoney(text) {
  return formatMoney(text, 'USD', { sign: true });
}

/** A percent string from the API ("1.25") → "+1.25%". */
export function percent(text) {
  if (text === null || text === undefined) return '—';
  const fixed = unscaled(scaled(text), 2);
  return `${scaled(fixed) > 0n ? '+' : ''}${fixed.replace('-', '−')}%`;
}

/** A price in dollars: at least two decimals, up to four when the API gives them. */
export function price(text) {
  return priceIn(text, 'USD');
}

/** A price in `currency`: as many decimals as the API gives, from the currency's minor
 * units up to four; none for a currency without minor units ("¥20,993"). */
export function priceIn(text, currency = 'USD') {
  if (text === null || text === undefined) return '—';
  const minor = minorUnits(currency);
  const given = (String(text).split('.')[1] || '').replace(/0+$/, '').length;
  return formatMoney(text, currency, { places: minor === 0 ? 0 : Math.min(Math.max(given, minor), 4) });
}

/** The currencies offered by the currency switches (any with ECB rates works). */
export const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'CHF', 'CAD'];

/** Money in a currency: "€1,234.50", "¥52,866", "CHF 1,234.50". */
export function inCurrency(text, currency = 'USD') {
  return formatMoney(text, currency);
}

/** A signed change in a currency: "+¥1,234", "−€3.20". */
export function signedInCurrency(text, currency = 'USD') {
  return formatMoney(text, currency, { sign: true });
}

/** Money already written in dollars ("+$3.20", "$101.0000") written in `currency` instead,
 * with that currency's minor units. inCurrency, signedInCurrency and priceIn do the same
 * from the API's own decimal string. */
export function signedIn(shown, currency = 'USD') {
  if (!currency || currency === 'USD' || shown === '—') return shown;
  const match = /^([+−]?)\$([\d,]+)(?:\.(\d+))?$/.exec(shown);
  if (!match) return shown;
  const [, sign, whole, fraction = ''] = match;
  const minor = minorUnits(currency);
  const decimal = `${sign === '−' ? '-' : ''}${whole.replaceAll(',', '')}.${fraction || '0'}`;
  return formatMoney(decimal, currency, { places: minor === 0 ? 0 : Math.max(fraction.length, minor), sign: sign === '+' });
}

/** A decimal fraction from the API ("0.018480") as a signed percent: "+1.85%". */
export function fractionPercent(text) {
  if (text === null || text === undefined) return '—';
  return percent(unscaled(scaled(text) * 100n, 4));
}

/** A ratio from the API ("-1.509009") to two places, "−1.51"; "—" when there is none. */
export function ratio(text) {
  if (text === null || text === undefined) return '—';
  return unscaled(scaled(text), 2).replace('-', '−');
}

/** A fraction that is never negative (volatility, drawdown) as a percent without a sign:
 * "0.123456" → "12.35%"; "—" when there is none. */
export function magnitudePercent(text) {
  return fractionPercent(text).replace(/^\+/, '');
}
