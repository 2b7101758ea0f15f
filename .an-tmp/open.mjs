import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const tname = {}, pname = {};
for (const e of ev) if (e.ph === 'M') { if (e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name; if (e.name==='process_name') pname[e.pid]=e.args.name; }
// the renderer with most main-thread tasks
const cnt = {};
for (const e of ev) if (e.ph==='X' && tname[e.pid+':'+e.tid]==='CrRendererMain') cnt[e.pid]=(cnt[e.pid]||0)+1;
const pid = +Object.entries(cnt).sort((a,b)=>b[1]-a[1])[0][0];
const main = ev.filter(e => e.pid===pid && tname[e.pid+':'+e.tid]==='CrRendererMain');
let nav = main.find(e => e.name==='navigationStart') || ev.find(e=>e.name==='navigationStart');
const t0 = nav ? nav.ts : Math.min(...main.filter(e=>e.ts).map(e=>e.ts));
console.log('nav', nav && nav.name);
const tops = main.filter(e => e.ph==='X' && e.name==='ThreadControllerImpl::RunTask').sort((a,b)=>a.ts-b.ts);
const kids = main.filter(e => e.ph==='X' && e.name!=='ThreadControllerImpl::RunTask' && e.name!=='RunTask');
const interesting = new Set(['ParseHTML','EvaluateScript','v8.compile','v8.evaluateModule','FunctionCall','TimerFire','FireAnimationFrame','EventDispatch','Layout','UpdateLayoutTree','Paint','PrePaint','Layerize','Commit','HitTest','v8.run','XHRReadyStateChange','MajorGC','MinorGC','V8.GC_SCAVENGER', 'BlinkGC.AtomicPhase','ScheduleStyleRecalculation','ResourceReceivedData','ParseAuthorStyleSheet','v8.produceCache','CompileScript','CompileCode','FunctionCall']);
const lim = +(process.argv[3]||3);
let total=0;
for (const top of tops) {
  const s = (top.ts - t0)/1000; if (s < -50) continue; if (s > +(process.argv[4]||3000)) break;
  const cpu = (top.tdur ?? top.dur)/1000; total += cpu;
  if (cpu < lim) continue;
  const inner = {};
  for (const k of kids) if (k.ts>=top.ts && k.ts < top.ts+top.dur && interesting.has(k.name)) {
    let key = k.name; if (k.name==='EvaluateScript' && k.args?.data?.url) key += ':'+k.args.data.url.split('/').pop();
    if (k.name==='FunctionCall' && k.args?.data?.functionName) key += ':'+k.args.data.functionName;
    if (k.name==='EventDispatch' && k.args?.data?.type) key += ':'+k.args.data.type;
    inner[key]=(inner[key]||0)+(k.tdur??k.dur)/1000;
  }
  const desc = Object.entries(inner).sort((a,b)=>b[1]-a[1]).slice(0,5).map(([k,v])=>k+'='+v.toFixed(1)).join(' ');
  console.log(s.toFixed(0).padStart(6), 'wall', (top.dur/1000).toFixed(1).padStart(6), 'cpu', cpu.toFixed(1).padStart(6), desc);
}
console.log('total cpu', total.toFixed(0));
