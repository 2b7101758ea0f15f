import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const tname = {};
for (const e of ev) if (e.ph === 'M' && e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name;
const byPid = {}, fc = {}, tasks={};
for (const e of ev) {
  if (e.ph !== 'X' || !e.dur) continue;
  const th = tname[e.pid + ':' + e.tid] || '';
  if (e.name === 'ThreadControllerImpl::RunTask') { const k=e.pid+' '+th; byPid[k] = (byPid[k] || 0) + e.dur / 1000; }
  if (e.name === 'FunctionCall' || e.name==='TimerFire' || e.name==='FireIdleCallback' || e.name==='EventDispatch' || e.name==='FireAnimationFrame') {
    const d = e.args?.data || {};
    const k = e.pid + ' ' + th + ' ' + e.name + ' ' + (d.functionName || d.type || '') + ' ' + (d.url || '').slice(-60) + ':' + (d.lineNumber ?? '');
    fc[k] = (fc[k] || 0) + e.dur / 1000;
  }
}
for (const [k, v] of Object.entries(byPid).sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(v.toFixed(0).padStart(8), k);
console.log('---');
for (const [k, v] of Object.entries(fc).sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(v.toFixed(0).padStart(8), k);
