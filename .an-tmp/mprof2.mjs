import fs from 'fs';
import path from 'path';
import { TraceMap, originalPositionFor } from '/work/main/node_modules/@jridgewell/trace-mapping/dist/trace-mapping.mjs';
const [file, pidS, fromS, toS, mode = 'fn'] = process.argv.slice(2);
const t = JSON.parse(fs.readFileSync(file));
const ev = t.traceEvents || t;
const pids = pidS.split(',').map(Number);
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
const marks = ev.filter(e => e.cat && e.cat.includes('user_timing') && /^bench:/.test(e.name)).map(e => ({ n: e.name, ms: (e.ts - t0) / 1000 })).sort((a, b) => a.ms - b.ms);
const sends = marks.filter(m => m.n === 'bench:send');
const wins = [];
if (fromS === 'text') { for (let i = 0; i < sends.length; i++) { const s = sends[i].ms, next = sends[i + 1]?.ms ?? Infinity; if (!marks.find(m => m.n === 'bench:card' && m.ms > s && m.ms < next)) wins.push([s, Math.min(s + +toS, next)]); } }
else wins.push([+fromS, +toS]);
const inWin = ms => wins.some(([a, b]) => ms >= a && ms < b);
const maps = {};
function mapFor(url) {
  if (url in maps) return maps[url];
  maps[url] = null;
  const m = /\/_next\/(static\/chunks\/[^?]+)/.exec(url);
  if (!m) return null;
  const js = path.join('/work/main/.next', m[1]);
  try { const src = fs.readFileSync(js, 'utf8'); const sm = /sourceMappingURL=(\S+)/.exec(src.slice(-300)); if (!sm) return null; maps[url] = new TraceMap(fs.readFileSync(path.join(path.dirname(js), sm[1]), 'utf8')); } catch { }
  return maps[url];
}
const cache = new Map();
function label(cf) {
  const k = cf.url + ':' + cf.lineNumber + ':' + cf.columnNumber + ':' + cf.functionName;
  if (cache.has(k)) return cache.get(k);
  let out = `${cf.functionName || '(anon)'} ${(cf.url || '').replace(/^.*\//, '')}`;
  const m = cf.url && mapFor(cf.url);
  if (m && cf.lineNumber >= 0) { const p = originalPositionFor(m, { line: cf.lineNumber + 1, column: cf.columnNumber }); if (p.source) out = `${p.name || cf.functionName || '(anon)'} ${p.source.replace(/^.*node_modules\//, 'nm/').replace(/^.*\/(components|app|server)\//, '$1/')}` + (mode === 'line' ? ':' + p.line : ''); }
  cache.set(k, out); return out;
}
const profs = {};
for (const e of ev) {
  if (!pids.includes(e.pid)) continue;
  if (e.name === 'Profile') { const p = profs[e.pid + e.id] ||= { nodes: new Map(), samples: [], deltas: [] }; p.start = e.args.data.startTime; p.tid = e.tid; }
  if (e.name === 'ProfileChunk') { const p = profs[e.pid + e.id] ||= { nodes: new Map(), samples: [], deltas: [] }; const d = e.args.data.cpuProfile || {}; for (const n of d.nodes || []) p.nodes.set(n.id, n); p.samples.push(...(d.samples || [])); p.deltas.push(...(e.args.data.timeDeltas || [])); }
}
const self = {}, incl = {}, files = {};
for (const p of Object.values(profs)) {
  let ts = p.start;
  for (let i = 0; i < p.samples.length; i++) {
    ts += p.deltas[i]; const ms = (ts - t0) / 1000; const dt = (p.deltas[i + 1] ?? 0) / 1000;
    if (!inWin(ms)) continue;
    let n = p.nodes.get(p.samples[i]); if (!n) continue;
    const l0 = label(n.callFrame); self[l0] = (self[l0] || 0) + dt;
    const f0 = l0.split(' ').slice(1).join(' ') || l0; files[f0] = (files[f0] || 0) + dt;
    const seen = new Set();
    while (n) { const k = label(n.callFrame); if (!seen.has(k)) { incl[k] = (incl[k] || 0) + dt; seen.add(k); } n = n.parent ? p.nodes.get(n.parent) : null; }
  }
}
console.log('windows', wins.length); console.log('SELF'); for (const [k, v] of Object.entries(self).sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(v.toFixed(1).padStart(7), k);
console.log('SELF BY FILE'); for (const [k, v] of Object.entries(files).sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(v.toFixed(1).padStart(7), k);
console.log('INCL'); for (const [k, v] of Object.entries(incl).sort((a, b) => b[1] - a[1]).slice(0, 70)) console.log(v.toFixed(1).padStart(7), k);
