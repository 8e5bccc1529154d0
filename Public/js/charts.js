// Charts with Chart.js (Debian's libjs-chart.js, served at /vendor/chart.js/). Values are
// converted to numbers for drawing only; every figure shown as text stays exact.
import { h } from './dom.js';

const palette = ['#2563eb', '#16a34a', '#f59e0b', '#dc2626', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#ea580c', '#475569'];

function unavailable() {
  return h('p', { class: 'empty' }, 'Charts are unavailable (Chart.js is not installed on this server).');
}

/** A canvas wrapped for layout; `draw(canvas)` runs once it is in the page. */
function chartBox(label, draw) {
  if (!window.Chart) return unavailable();
  const canvas = h('canvas', { role: 'img', 'aria-label': label });
  const box = h('div', { class: 'chart' }, canvas);
  requestAnimationFrame(() => { if (canvas.isConnected) draw(canvas); });
  return box;
}

/** Releases the charts drawn inside `element` before it is redrawn. */
export function destroyCharts(element) {
  if (!window.Chart) return;
  for (const canvas of element.querySelectorAll('canvas')) window.Chart.getChart(canvas)?.destroy();
}

/** The axes of a chart over time: a few dates, and values written with at most two
 * decimals (the axis is a guide; the figures beside the chart are exact). */
const timeScales = {
  x: { ticks: { maxTicksLimit: 6, autoSkip: true } },
  y: { ticks: { callback: (value) => Number(value).toLocaleString('en-US', { maximumFractionDigits: 2 }) } },
};

/** A line over time; with `dots`, each point marked too (a few league days). */
export function lineChart(label, labels, values, { dots = false } = {}) {
  return chartBox(label, (canvas) => new window.Chart(canvas, {
    type: 'line',
    data: { labels, datasets: [{ label, data: values.map(Number), borderColor: palette[0], backgroundColor: palette[0], pointRadius: dots && labels.length < 60 ? 3 : 0, borderWidth: 2, tension: 0.1 }] },
    options: {
      animation: false, maintainAspectRatio: false, interaction: { mode: 'index', intersect: false },
      plugins: { legend: { display: false } },
      scales: timeScales,
    },
  }));
}

/** Where a doughnut's legend goes: beside it, or under it in a box too narrow for both. */
const legendSide = (width) => (width < 480 ? 'bottom' : 'right');

export function doughnutChart(label, labels, values) {
  return chartBox(label, (canvas) => new window.Chart(canvas, {
    type: 'doughnut',
    data: { labels, datasets: [{ data: values.map(Number), backgroundColor: labels.map((_, i) => palette[i % palette.length]) }] },
    options: {
      animation: false, maintainAspectRatio: false,
      plugins: { legend: { position: legendSide(canvas.parentElement.clientWidth) } },
      onResize: (chart, size) => { chart.options.plugins.legend.position = legendSide(size.width); },
    },
  }));
}

/** Several series over the same labels: [{label, values}]. */
export function linesChart(label, labels, series) {
  return chartBox(label, (canvas) => new window.Chart(canvas, {
    type: 'line',
    data: {
      labels,
      datasets: series.map((s, i) => ({
        label: s.label, data: s.values.map((v) => (v === null ? null : Number(v))), borderColor: palette[i % palette.length],
        backgroundColor: palette[i % palette.length], pointRadius: labels.length < 30 ? 3 : 0, borderWidth: 2, tension: 0.1, stepped: s.stepped ?? false,
      })),
    },
    options: {
      animation: false, maintainAspectRatio: false, interaction: { mode: 'index', intersect: false },
      scales: timeScales,
    },
  }));
}
