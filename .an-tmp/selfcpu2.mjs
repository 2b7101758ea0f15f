import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const pid = +process.argv[3];
const ev = t.traceEvents || t;
const tname = {};
for (const e of ev) if (e.ph === 'M' && e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name;
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
const marks = ev.filter(e => e.cat && e.cat.includes('user_timing') && /^bench:/.test(e.name)).map(e => ({ n: e.name, ms: (e.ts - t0) / 1000 })).sort((a, b) => a.ms - b.ms);
const sends = marks.filter(m => m.n === 'bench:send');
const wins = [];
for (let i = 0; i < sends.length; i++) { const s = sends[i].ms, next = sends[i + 1]?.ms ?? Infinity; if (!marks.find(m => m.n === 'bench:card' && m.ms > s && m.ms < next)) { const r = marks.find(m => m.n === 'bench:reply' && m.ms > s); wins.push([s, r ? r.ms : s + 300]); }; }
const main = ev.filter(e => e.pid === pid && tname[e.pid + ':' + e.tid] === 'CrRendererMain' && e.ph === 'X' && e.dur && e.tdur !== undefined).filter(e => { const ms = (e.ts - t0) / 1000; return wins.some(([a, b]) => ms >= a && ms < b); }).sort((a, b) => a.ts - b.ts || b.dur - a.dur);
// self tdur: subtract direct children's tdur via a stack
const self = {}; const stack = [];
const label = e => { const d = e.args?.data || {}; return e.name === 'FunctionCall' ? 'FunctionCall ' + (d.url || '').replace(/^.*\//, '').slice(0, 30) : e.name; };
for (const e of main) {
  while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
  const parent = stack.at(-1);
  if (parent) self[label(parent)] = (self[label(parent)] || 0) - e.tdur / 1000;
  self[label(e)] = (self[label(e)] || 0) + e.tdur / 1000;
  stack.push(e);
}
console.log('windows', wins.length);
for (const [k, v] of Object.entries(self).sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((v / wins.length).toFixed(1).padStart(7), k);
