import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const pid = +process.argv[3], from = +process.argv[4], to = +process.argv[5];
const tname = {};
for (const e of ev) if (e.ph === 'M' && e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name;
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
const agg = {};
for (const e of ev) {
  if (e.pid !== pid || e.ph !== 'X' || !e.dur) continue;
  const ms = (e.ts - t0) / 1000; if (ms < from || ms >= to) continue;
  const th = tname[e.pid + ':' + e.tid];
  if (['UpdateLayoutTree','Layout','Paint','PrePaint','Commit','Layerize','HitTest','IntersectionObserverController::computeIntersections','ScrollLayer','UpdateLayer','RasterTask','MajorGC','MinorGC','ParseHTML','ParseAuthorStyleSheet','Decode Image','ImageDecodeTask'].includes(e.name)) {
    const k = th + ' ' + e.name; (agg[k] ||= [0, 0]); agg[k][0] += e.dur / 1000; agg[k][1]++;
    if (e.name === 'Layout' && process.argv[6]) console.log(ms.toFixed(1), (e.dur/1000).toFixed(1), JSON.stringify(e.args.beginData||{}).slice(0,150));
    if (e.name === 'UpdateLayoutTree' && process.argv[6]) console.log(ms.toFixed(1), 'ULT', (e.dur/1000).toFixed(1), JSON.stringify(e.args.elementCount ?? e.args).slice(0,150));
  }
}
for (const [k, [v, n]] of Object.entries(agg).sort((a, b) => b[1][0] - a[1][0])) console.log(v.toFixed(1).padStart(7), String(n).padStart(4), k);
