import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const pname = {}, tname = {};
for (const e of ev) if (e.ph === 'M') { if (e.name === 'process_name') pname[e.pid] = e.args.name; if (e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name; }
// top-level: toplevel category events (RunTask / ThreadControllerImpl::RunTask)
const byThread = {}, byName = {};
let tmin = Infinity, tmax = 0;
for (const e of ev) {
  if (e.ph !== 'X' || !e.dur) continue;
  tmin = Math.min(tmin, e.ts); tmax = Math.max(tmax, e.ts + e.dur);
  const key = (pname[e.pid] || e.pid) + ' / ' + (tname[e.pid + ':' + e.tid] || e.tid);
  if (e.cat.includes('toplevel') && (e.name === 'ThreadControllerImpl::RunTask' || e.name === 'RunTask')) byThread[key] = (byThread[key] || 0) + e.dur / 1000;
}
console.log('span s', ((tmax - tmin) / 1e6).toFixed(1));
for (const [k, v] of Object.entries(byThread).sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(v.toFixed(0).padStart(8), k);
// per-name on renderer main threads: self-ish totals of known devtools events
const names = {};
for (const e of ev) {
  if (e.ph !== 'X' || !e.dur) continue;
  const th = tname[e.pid + ':' + e.tid] || '';
  if (!/CrRendererMain|Compositor|Raster|VizCompositor|CrGpuMain/.test(th)) continue;
  const key = (pname[e.pid]||e.pid) + '/' + th + ' ' + e.name;
  names[key] = (names[key] || 0) + e.dur / 1000;
}
for (const [k, v] of Object.entries(names).sort((a, b) => b[1] - a[1]).slice(0, 60)) console.log(v.toFixed(0).padStart(8), k);
