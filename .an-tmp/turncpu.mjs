import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const tname = {};
for (const e of ev) if (e.ph === 'M' && e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name;
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
// text turns: bench:send followed by bench:reply, and no bench:card before the next send
const marks = ev.filter(e => e.cat && e.cat.includes('user_timing') && /^bench:/.test(e.name)).map(e => ({ n: e.name, ms: (e.ts - t0) / 1000, pid: e.pid })).sort((a, b) => a.ms - b.ms);
const sends = marks.filter(m => m.n === 'bench:send');
const wins = [];
for (let i = 0; i < sends.length; i++) {
  const s = sends[i].ms, next = sends[i + 1]?.ms ?? Infinity;
  const card = marks.find(m => m.n === 'bench:card' && m.ms > s && m.ms < next);
  if (!card) wins.push([s, Math.min(s + 700, next)]);
}
const per = {};
for (const e of ev) {
  if (e.ph !== 'X' || e.name !== 'ThreadControllerImpl::RunTask') continue;
  const ms = (e.ts - t0) / 1000;
  const th = tname[e.pid + ':' + e.tid];
  if (!/CrRendererMain|Compositor|VizCompositor|CrBrowserMain/.test(th)) continue;
  if (!wins.some(([a, b]) => ms >= a && ms < b)) continue;
  const k = e.pid + ' ' + th; per[k] = (per[k] || 0) + (e.tdur || 0) / 1000;
}
console.log('text turns', wins.length);
for (const [k, v] of Object.entries(per).sort((a, b) => b[1] - a[1])) console.log((v / wins.length).toFixed(1).padStart(7), k);
