import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const pid = +process.argv[3], from = +process.argv[4], to = +process.argv[5];
const tname = {};
for (const e of ev) if (e.ph === 'M' && e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name;
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
const main = ev.filter(e => e.pid === pid && tname[e.pid + ':' + e.tid] === 'CrRendererMain' && e.ph === 'X' && e.dur && (e.ts - t0) / 1000 >= from && (e.ts - t0) / 1000 < to).sort((a,b)=>a.ts-b.ts||b.dur-a.dur);
const agg = {};
let cur = null;
for (const e of main) {
  if (e.name === 'ThreadControllerImpl::RunTask') { cur = e; continue; }
  if (!cur || e.ts > cur.ts + cur.dur) continue;
  if (['RunTask','ThreadControllerImpl::RunTask'].includes(e.name)) continue;
  const d = e.args?.data || {};
  const k = e.name + ' ' + (d.functionName || d.type || '') + ' ' + (d.url||'').slice(-40) + (d.lineNumber?':'+d.lineNumber+':'+d.columnNumber:'');
  agg[k] = (agg[k] || 0) + e.dur / 1000;
}
for (const [k, v] of Object.entries(agg).sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(v.toFixed(1).padStart(8), k);
