import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const pid = +process.argv[3];
const ev = t.traceEvents || t;
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
const marks = ev.filter(e => e.cat && e.cat.includes('user_timing') && /^bench:/.test(e.name)).map(e => ({ n: e.name, ms: (e.ts - t0) / 1000 })).sort((a, b) => a.ms - b.ms);
const sends = marks.filter(m => m.n === 'bench:send');
const wins = [];
for (let i = 0; i < sends.length; i++) { const s = sends[i].ms, next = sends[i + 1]?.ms ?? Infinity; if (!marks.find(m => m.n === 'bench:card' && m.ms > s && m.ms < next)) wins.push([s, Math.min(s + 700, next)]); }
const inWin = ms => wins.some(([a, b]) => ms >= a && ms < b);
const c = {};
for (const e of ev) { if (e.pid !== pid) continue; const ms = (e.ts - t0) / 1000; if (!inWin(ms)) continue;
  if (e.name === 'conduit:event-received' && e.ph !== 'e') c.events = (c.events || 0) + 1;
  if (e.ph === 'X' && ['FireAnimationFrame', 'Paint', 'Layout', 'UpdateLayoutTree', 'Commit'].includes(e.name)) c[e.name] = (c[e.name] || 0) + 1;
  if (e.ph === 'X' && e.name === 'FunctionCall' && e.args?.data?.functionName === 'ws.onmessage') c.wsmsg = (c.wsmsg || 0) + 1;
}
console.log(wins.length, JSON.stringify(c));
