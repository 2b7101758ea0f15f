import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const from = +(process.argv[3] ?? 0), to = +(process.argv[4] ?? 1e12);
const tname = {}, pname = {};
for (const e of ev) if (e.ph === 'M') { if (e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name; if (e.name === 'process_name') pname[e.pid] = e.args.name; }
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
const w = {}, c = {};
for (const e of ev) {
  if (e.ph !== 'X' || e.name !== 'ThreadControllerImpl::RunTask') continue;
  const ms = (e.ts - t0) / 1000; if (ms < from || ms >= to) continue;
  const k = e.pid + ' ' + (pname[e.pid]||'') + ' ' + tname[e.pid + ':' + e.tid];
  w[k] = (w[k] || 0) + e.dur / 1000; c[k] = (c[k] || 0) + (e.tdur || 0) / 1000;
}
for (const k of Object.keys(w).sort((a, b) => c[b] - c[a]).slice(0, 20)) console.log(c[k].toFixed(0).padStart(7), w[k].toFixed(0).padStart(7), k);
