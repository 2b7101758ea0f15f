import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const pid = +process.argv[3];
const tname = {};
for (const e of ev) if (e.ph === 'M' && e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name;
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
const B = 250, buckets = {}, marks = {};
for (const e of ev) {
  if (e.pid !== pid) continue;
  const th = tname[e.pid + ':' + e.tid] || '';
  if (th !== 'CrRendererMain') continue;
  if (e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask') { const b = Math.floor((e.ts - t0) / 1000 / B); buckets[b] = (buckets[b] || 0) + e.dur / 1000; }
  if ((e.ph === 'R' || e.ph === 'I' || e.ph==='i' || e.ph==='b'||e.ph==='n') && e.cat && e.cat.includes('user_timing')) { const b = Math.floor((e.ts - t0) / 1000 / B); (marks[b] ||= []).push(e.name); }
}
const max = Math.max(...Object.keys(buckets).map(Number));
let line = '';
for (let b = 0; b <= max; b++) console.log(String(b * B).padStart(6), String(Math.round(buckets[b] || 0)).padStart(4), '#'.repeat(Math.round((buckets[b] || 0) / 10)), (marks[b] || []).filter(m=>/send|bench/.test(m)).join(','));
