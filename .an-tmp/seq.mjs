import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const pid = +process.argv[3], from = +process.argv[4], to = +process.argv[5];
const tname = {};
for (const e of ev) if (e.ph === 'M' && e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name;
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
const main = ev.filter(e => e.pid === pid && tname[e.pid + ':' + e.tid] === 'CrRendererMain' && e.ph === 'X' && e.dur && (e.ts - t0) / 1000 >= from && (e.ts - t0) / 1000 < to).sort((a,b)=>a.ts-b.ts||b.dur-a.dur);
let cur = null, kids = [];
const flush = () => { if (cur && cur.dur > 1500) console.log(((cur.ts - t0) / 1000).toFixed(1), (cur.dur / 1000).toFixed(1), kids.slice(0, 6).join(' | ')); };
for (const e of main) {
  if (e.name === 'ThreadControllerImpl::RunTask') { flush(); cur = e; kids = []; continue; }
  if (!cur || e.ts > cur.ts + cur.dur || e.name === 'RunTask') continue;
  if (e.dur < 500) continue;
  const d = e.args?.data || {};
  kids.push(e.name + (d.functionName ? ' ' + d.functionName : '') + (d.url ? ' ' + d.url.slice(-22) + ':' + d.lineNumber + ':' + d.columnNumber : '') + (d.type ? ' ' + d.type : '') + ' ' + (e.dur / 1000).toFixed(1));
}
flush();
