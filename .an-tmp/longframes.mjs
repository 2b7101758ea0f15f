import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const tname = {};
for (const e of ev) if (e.ph === 'M' && e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name;
const pid = +process.argv[3];
const main = ev.filter(e => e.pid===pid && tname[e.pid+':'+e.tid]==='CrRendererMain' && e.ph==='X');
const tops = main.filter(e => e.name==='ThreadControllerImpl::RunTask').sort((a,b)=>a.ts-b.ts);
const kids = main.filter(e => e.name!=='ThreadControllerImpl::RunTask' && e.name!=='RunTask').sort((a,b)=>a.ts-b.ts);
const begins = main.filter(e=>e.name==='BeginMainThreadFrame').map(e=>e.ts);
const begins2 = ev.filter(e=>e.pid===pid && e.name==='BeginMainThreadFrame').map(e=>e.ts).sort((a,b)=>a-b);
const B = begins2.length?begins2:begins;
const rows=[];
for (let i=0;i<B.length-1;i++){ const a=B[i], b=B[i+1]; rows.push({a,b,iv:(b-a)/1000}); }
rows.sort((x,y)=>y.iv-x.iv);
const n = +(process.argv[4]||25);
const cats = {};
for (const r of rows.slice(0,n)) {
  const inner = {};
  for (const k of kids) { if (k.ts < r.a) continue; if (k.ts >= r.b) break;
    let key = k.name; if (k.name==='FunctionCall') key += ':'+(k.args?.data?.functionName||'');
    if (k.name==='EventDispatch') key += ':'+(k.args?.data?.type||'');
    if (!/FunctionCall|EventDispatch|TimerFire|FireAnimationFrame|Layout|Paint|UpdateLayoutTree|MinorGC|MajorGC|ResizeObserver|v8.run|ParseHTML/.test(k.name)) continue;
    inner[key]=(inner[key]||0)+(k.tdur??k.dur)/1000; }
  const desc = Object.entries(inner).sort((a,b)=>b[1]-a[1]).slice(0,6).map(([k,v])=>k+'='+v.toFixed(1)).join(' ');
  console.log(r.iv.toFixed(1).padStart(7), desc);
}
